//! The `ovs-ofctl` text syntax: `FlowMod`, `Match`, `GroupMod` and `MeterMod` `FromStr` on arbitrary UTF-8
//! never panic, and what parses prints (`Display`) to text that parses to the same value.
#![no_main]

use std::fmt::Display;
use std::str::FromStr;

use libfuzzer_sys::fuzz_target;
use openflow::msg::flow_mod::FlowMod;
use openflow::msg::group_mod::GroupMod;
use openflow::msg::meter_mod::MeterMod;
use openflow::oxm::Match;

fn round_trip<T: FromStr + Display + PartialEq + std::fmt::Debug>(text: &str)
where
    T::Err: Display,
{
    let Ok(value) = text.parse::<T>() else { return };
    let printed = value.to_string();
    let again = printed
        .parse::<T>()
        .unwrap_or_else(|e| panic!("{text:?} printed as {printed:?}, which does not parse: {e}"));
    assert_eq!(again, value, "{text:?} printed as {printed:?}");
}

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    round_trip::<FlowMod>(text);
    round_trip::<Match>(text);
    round_trip::<GroupMod>(text);
    round_trip::<MeterMod>(text);
});

//! The `MIB_*_TABLE` buffers the `Get*Table2` calls return, freed with `FreeMibTable`.

use windows::Win32::NetworkManagement::IpHelper::FreeMibTable;

/// A table returned by an IP Helper `Get*Table2` call: a count followed by rows of `R`.
pub(super) struct MibTable<T> {
    table: *mut T,
}

/// The layout every `MIB_*_TABLE2` shares: `NumEntries` then the rows (`Table[1]` in C).
pub(super) trait MibRows {
    /// The row type.
    type Row;
    /// The number of rows.
    fn count(&self) -> u32;
    /// The first row.
    fn first(&self) -> *const Self::Row;
}

impl<T: MibRows> MibTable<T> {
    /// Takes ownership of `table` (null allowed: no rows).
    ///
    /// # Safety
    /// `table` is null or was returned by an IP Helper `Get*Table2` call and is not freed elsewhere.
    pub(super) unsafe fn new(table: *mut T) -> Self {
        MibTable { table }
    }

    /// The rows.
    pub(super) fn rows(&self) -> &[T::Row] {
        if self.table.is_null() {
            return &[];
        }
        // SAFETY: IP Helper lays out `count` rows contiguously from `first`, valid until freed.
        unsafe {
            let table = &*self.table;
            std::slice::from_raw_parts(table.first(), table.count() as usize)
        }
    }
}

impl<T> Drop for MibTable<T> {
    fn drop(&mut self) {
        if !self.table.is_null() {
            // SAFETY: the table came from a Get*Table2 call (see `new`) and is freed once.
            unsafe { FreeMibTable(self.table.cast()) }
        }
    }
}

macro_rules! mib_rows {
    ($table:ty => $row:ty) => {
        impl MibRows for $table {
            type Row = $row;
            fn count(&self) -> u32 {
                self.NumEntries
            }
            fn first(&self) -> *const $row {
                self.Table.as_ptr()
            }
        }
    };
}

use windows::Win32::NetworkManagement::IpHelper::{
    MIB_IPFORWARD_ROW2, MIB_IPFORWARD_TABLE2, MIB_IPNET_ROW2, MIB_IPNET_TABLE2,
    MIB_UNICASTIPADDRESS_ROW, MIB_UNICASTIPADDRESS_TABLE,
};

mib_rows!(MIB_IPFORWARD_TABLE2 => MIB_IPFORWARD_ROW2);
mib_rows!(MIB_UNICASTIPADDRESS_TABLE => MIB_UNICASTIPADDRESS_ROW);
mib_rows!(MIB_IPNET_TABLE2 => MIB_IPNET_ROW2);

//! The `antrea` CNI plugin. Run by the container runtime with the `CNI_*` environment it forwards
//! the command to the Antrea agent; `antrea install --cni-bin-dir DIR --cni-conf-dir DIR` copies
//! itself and the conflist into a node's CNI directories. `antrea --version` prints the build's
//! version and commit for people (the runtime asks with `CNI_COMMAND=VERSION`, and runs the
//! plugin without arguments).

use std::io::{Read, Write};
use std::process::ExitCode;

use cni::install::InstallPlan;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.first().map(String::as_str) {
        Some("install") => return install(&args[1..]),
        Some("--version") if args.len() == 1 => {
            println!("{}", buildinfo::version_line("antrea"));
            return ExitCode::SUCCESS;
        }
        _ => {}
    }
    let mut stdin = Vec::new();
    if let Err(e) = std::io::stdin().read_to_end(&mut stdin) {
        eprintln!("antrea: reading stdin: {e}");
    }
    let outcome = cni::plugin::run(&|name| std::env::var(name).ok(), &stdin);
    let mut stdout = std::io::stdout().lock();
    if stdout
        .write_all(&outcome.stdout)
        .and_then(|()| stdout.flush())
        .is_err()
    {
        return ExitCode::FAILURE;
    }
    ExitCode::from(u8::try_from(outcome.exit_code).unwrap_or(1))
}

fn install(args: &[String]) -> ExitCode {
    let result = std::env::current_exe()
        .map_err(|e| cni::install::InstallError::Io {
            path: "current executable".into(),
            source: e,
        })
        .and_then(|exe| InstallPlan::from_args(args, exe))
        .and_then(|plan| plan.install());
    match result {
        Ok(done) => {
            for (path, written) in [done.plugin, done.conflist] {
                println!(
                    "{} {}",
                    if written { "installed" } else { "unchanged" },
                    path.display()
                );
            }
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("antrea: {e}");
            ExitCode::FAILURE
        }
    }
}

//! One module per subcommand. Each exposes `Args` (clap) and
//! `run(Args) -> anyhow::Result<ExitCode>`; an `Err` is reported by `main` and exits 2.

pub mod builtin;
pub mod frame;
pub mod identity;
pub mod manifest;
pub mod plugins;
pub mod probe;
pub mod render;
pub mod run;
pub mod validate;

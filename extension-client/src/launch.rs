//! How to start an extension process.

use std::ffi::OsString;
use std::fmt;
use std::path::PathBuf;
use std::process::Command;

use curupira_process::own_process_group;

/// How to start an extension: a program, its arguments, its working directory and the
/// variables added to the environment it inherits.
///
/// ```
/// use curupira_client::LaunchCommand;
///
/// let launch = LaunchCommand::new("npx", ".")
///     .arg("--yes")
///     .arg("@acme/trigger@1.2.0")
///     .env("ACME_TOKEN_FILE", "/run/secrets/acme");
/// assert_eq!(
///     launch.to_string(),
///     "ACME_TOKEN_FILE=/run/secrets/acme npx --yes @acme/trigger@1.2.0"
/// );
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LaunchCommand {
    /// The program: a path, or a name looked up on `PATH`.
    pub program: PathBuf,
    /// Its arguments.
    pub args: Vec<OsString>,
    /// The working directory.
    pub cwd: PathBuf,
    /// Variables set in the child's environment, on top of the inherited ones.
    pub env: Vec<(OsString, OsString)>,
}

impl LaunchCommand {
    /// A program to run in `cwd`, without arguments or extra variables.
    pub fn new(program: impl Into<PathBuf>, cwd: impl Into<PathBuf>) -> Self {
        LaunchCommand {
            program: program.into(),
            args: Vec::new(),
            cwd: cwd.into(),
            env: Vec::new(),
        }
    }

    /// The same command with one more argument.
    pub fn arg(mut self, arg: impl Into<OsString>) -> Self {
        self.args.push(arg.into());
        self
    }

    /// The same command with more arguments.
    pub fn args<I>(mut self, args: I) -> Self
    where
        I: IntoIterator,
        I::Item: Into<OsString>,
    {
        self.args.extend(args.into_iter().map(Into::into));
        self
    }

    /// The same command with one more environment variable.
    pub fn env(mut self, key: impl Into<OsString>, value: impl Into<OsString>) -> Self {
        self.env.push((key.into(), value.into()));
        self
    }

    /// A `std::process::Command` for this launch, in a process group of its own on
    /// Unix (so that killing the group also ends what the extension started). Pipes
    /// are the caller's choice.
    pub fn command(&self) -> Command {
        let mut command = Command::new(&self.program);
        command
            .args(&self.args)
            .envs(self.env.iter().map(|(key, value)| (key, value)))
            .current_dir(&self.cwd);
        own_process_group(&mut command);
        command
    }

    /// Why the program could not be started, as the end of a sentence: for a program
    /// that is not there, where it was looked for (a name without a path separator on
    /// `PATH`, a path as written, relative to the working directory when relative),
    /// then the system's words.
    ///
    /// ```
    /// use std::io;
    /// use curupira_client::LaunchCommand;
    ///
    /// let missing = io::Error::from(io::ErrorKind::NotFound);
    /// let why = LaunchCommand::new("counter", ".").start_failure(&missing);
    /// assert!(why.starts_with("no program `counter` on PATH (a program named without `/` is looked up on PATH"), "{why}");
    /// ```
    pub fn start_failure(&self, err: &std::io::Error) -> String {
        if err.kind() != std::io::ErrorKind::NotFound {
            return err.to_string();
        }
        let program = self.program.display();
        if self.program.components().count() == 1 && !self.program.is_absolute() {
            format!(
                "no program `{program}` on PATH (a program named without `/` is looked up on \
                 PATH; a manifest's `command` with a `/` is taken relative to the manifest's \
                 folder): {err}"
            )
        } else if self.program.is_absolute() {
            format!("`{program}` does not exist: {err}")
        } else {
            format!(
                "`{program}` does not exist relative to `{}`: {err}",
                self.cwd.display()
            )
        }
    }
}

impl fmt::Display for LaunchCommand {
    /// The variables, the program and the arguments as one line, as a shell would take
    /// it (words that are empty or hold spaces quoted). The directory is not shown.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (key, value) in &self.env {
            write!(
                f,
                "{}={} ",
                key.to_string_lossy(),
                Word(&value.to_string_lossy())
            )?;
        }
        write!(f, "{}", self.program.display())?;
        for arg in &self.args {
            write!(f, " {}", Word(&arg.to_string_lossy()))?;
        }
        Ok(())
    }
}

/// One word of a command line, quoted when empty or holding whitespace.
struct Word<'a>(&'a str);

impl fmt::Display for Word<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.0.is_empty() || self.0.contains(char::is_whitespace) {
            write!(f, "'{}'", self.0)
        } else {
            f.write_str(self.0)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_launch_command_shows_as_one_line() {
        let launch = LaunchCommand::new("npx", ".").args(["--yes", "a b", ""]);
        assert_eq!(launch.to_string(), "npx --yes 'a b' ''");
        let launch = launch.env("A", "x y");
        assert_eq!(launch.to_string(), "A='x y' npx --yes 'a b' ''");
    }
}

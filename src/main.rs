//! The `roqsim` binary: the command line lives in the library ([`roqsim::cli`]), so that a crate
//! adding its own plugins gets the same verbs through `roqsim::cli::main_with`.

fn main() -> std::process::ExitCode {
    roqsim::cli::main()
}

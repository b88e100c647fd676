//! Worlds that explain themselves: the machine-readable answers behind `roqsim scenes inputs`,
//! `roqsim scenes describe` and `roqsim catalog` (see docs/worlds.md). Each verb prints exactly
//! one line of JSON on stdout; problems go to stderr.

pub mod catalog;
pub mod cli;
pub mod describe;
pub mod inputs;

//! Recording, provenance and replay (docs/recording.md).
//!
//! `roqsim sim WORLD --record run.mcap` writes one MCAP file: state samples at an exact
//! decimation of the physics rate, every endpoint output as the ROS 2 message the bridge would
//! publish (CDR with the published Jazzy definitions, whether or not `--ros` is on), every inbound
//! payload and reset with the step it was applied before, and the provenance that rebuilds the
//! world. `roqsim replay` rebuilds it from that provenance alone and re-runs it bit for bit.
//! ROS-free: the CDR encoding is written here, not taken from a ROS client library.

pub mod cdr;
pub mod cli;
pub mod integrity;
pub mod msgs;
pub mod provenance;
pub mod recorder;
pub mod replay;
pub mod restore;
pub mod sink;
pub mod state;
pub mod topic_filter;

pub use provenance::RunInputs;
pub use recorder::{RecordOptions, Recorder, TopicFilter};
pub use replay::{open, replay, Recording, ReplayReport};
pub use state::StateSample;

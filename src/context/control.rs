//! Run control: play / pause / step / reset / quit requests the driver honours between steps.
//!
//! A transport (the simulation_interfaces service) changes these fields from a posted command on
//! the physics thread; the runner reads them before every step. While paused no physics step is
//! taken, sim time and /clock stand still, actuators keep their targets, and the engine's
//! [`crate::Engine::idle`] keeps transport plugins publishing (joint_states, TF).

/// The simulation's run state (simulation_interfaces/SimulationState values).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RunState {
    /// Stopped: reset to the initial state and not stepping (SimulationState.STATE_STOPPED = 0).
    Stopped,
    /// Stepping, paced (STATE_PLAYING = 1).
    Playing,
    /// Not stepping; state held (STATE_PAUSED = 2).
    Paused,
    /// Ending the run (STATE_QUITTING = 3).
    Quitting,
}

/// What a reset restores (simulation_interfaces/ResetSimulation scope bits).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ResetScope {
    /// Reset the simulation time to 0 (a new episode). When false, sim time (and /clock) keep
    /// increasing monotonically across the reset so running ROS stacks survive it.
    pub time: bool,
    /// Reset entity states (qpos/qvel/act, presence).
    pub state: bool,
    /// Re-spawn entities (presence back to declared).
    pub spawned: bool,
}

impl ResetScope {
    /// Everything (SCOPE_ALL / SCOPE_DEFAULT).
    pub const ALL: ResetScope = ResetScope { time: true, state: true, spawned: true };
}

/// Requests the runner honours between steps.
#[derive(Debug, Clone, PartialEq)]
pub struct RunControl {
    /// Current run state.
    pub state: RunState,
    /// Steps still to take while paused (StepSimulation / SimulateSteps).
    pub pending_steps: u64,
    /// A reset to perform before the next step.
    pub reset: Option<ResetScope>,
}

impl Default for RunControl {
    fn default() -> Self {
        RunControl { state: RunState::Playing, pending_steps: 0, reset: None }
    }
}

//! The reports monitors and limits publish (contact, clearance, energy, upright, force limit,
//! contact impulse and location) and the controllers' lifecycle transition events.

use serde::{Deserialize, Serialize};

/// What `contact_monitor` reports: did the watched entity touch something it should not.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ContactReport {
    /// Sim time (s) of the report.
    pub stamp: f64,
    /// A qualifying contact exists this step (with `latch`: has existed since the reset).
    pub in_contact: bool,
    /// Sim time (s) of the first qualifying contact since the reset; -1.0 if none.
    pub first_time: f64,
    /// Qualifying contacts in the current step.
    pub count: u32,
    /// The watched entity's geom in the first contact ("" if none).
    pub geom_a: String,
    /// The other geom of the first contact ("" if none).
    pub geom_b: String,
}

/// What `contact_impulse` reports: how hard the watched entity was hit, integrated over the run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ContactImpulseReport {
    /// Sim time (s) of the report.
    pub stamp: f64,
    /// Integral of the summed normal force of the qualifying contacts since the reset (N·s).
    pub impulse_ns: f64,
    /// The largest single-step summed normal force since the reset (N).
    pub peak_normal_n: f64,
    /// Time a qualifying contact existed since the reset (s).
    pub contact_time_s: f64,
    /// This step's summed normal force (N).
    pub normal_n: f64,
    /// This step's qualifying contacts.
    pub count: u32,
    /// Sim time (s) of the peak step; -1.0 if nothing was touched.
    pub peak_time: f64,
    /// The watched entity's geom in the peak step's strongest contact ("" if none).
    pub peak_geom_a: String,
    /// The other geom of that contact ("" if none).
    pub peak_geom_b: String,
}

/// What `contact_location` reports: where the watched entity is being touched.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ContactLocation {
    /// Sim time (s) of the computation.
    pub time: f64,
    /// Frame of `x`/`y`/`z`: the watched body's (its model name) or `world`.
    pub frame_id: String,
    /// A qualifying contact exists.
    pub in_contact: bool,
    /// `none`, `point` (one sensing area) or `line` (two or more).
    pub kind: String,
    /// Centre of the touched region (m, in `frame_id`).
    pub x: f64,
    /// Centre y (m).
    pub y: f64,
    /// Centre z (m).
    pub z: f64,
    /// Distance between the region's two furthest sensing areas (m); 0.0 for a point.
    pub extent: f64,
    /// Sensing areas (contacts merged within `merge_radius`).
    pub count: u32,
}

/// What `clearance_monitor` reports: how close the watched entity came to anything it could collide
/// with.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ClearanceReport {
    /// Sim time (s) of the report.
    pub stamp: f64,
    /// Distance (m) at the latest measurement; `distmax` when saturated. Negative = penetration.
    pub current: f64,
    /// Closest approach (m) since the reset.
    pub minimum: f64,
    /// Sim time (s) of the closest approach (-1.0 before any measurement).
    pub at_time: f64,
    /// Geom the closest approach was to ("" when nothing came within `distmax`).
    pub geom: String,
    /// True when nothing was within `distmax`: `current` then means "at least this far".
    pub saturated: bool,
}

/// What `energy_monitor` reports: the actuators' energy bill, integrated at the physics rate:
/// what a run cost.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct EnergyReport {
    /// Sim time (s) of the report.
    pub stamp: f64,
    /// Electrical energy drawn since the reset (J): driving power / efficiency + idle + resistive
    /// (− regenerated, when `regenerative`).
    pub energy_j: f64,
    /// Mechanical work of the actuators while driving (J): the integral of the positive parts.
    pub driving_j: f64,
    /// Mechanical work done ON the actuators by the load (J, ≥ 0): the integral of the negative
    /// parts' magnitude. Credited back only when `regenerative`.
    pub driven_j: f64,
    /// Integral of the summed absolute actuator torques/forces (N·m·s or N·s).
    pub torque_integral_nms: f64,
    /// Electrical power at the latest step (W).
    pub power_w: f64,
    /// Metered actuators, in report order (unprefixed names).
    pub actuators: Vec<String>,
    /// Per actuator: driving work (J).
    pub actuator_driving_j: Vec<f64>,
    /// Per actuator: driven work (J, ≥ 0).
    pub actuator_driven_j: Vec<f64>,
    /// State of charge 0..1; `None` when no `capacity_wh` was given (unknown, not full).
    pub state_of_charge: Option<f64>,
    /// Battery capacity (Wh); `None` when not modelled.
    pub capacity_wh: Option<f64>,
    /// Nominal voltage (V); `None` when unknown.
    pub voltage: Option<f64>,
    /// Current drawn (A) = power / voltage; `None` without a voltage.
    pub current_a: Option<f64>,
    /// Latched once the modelled charge reached zero.
    pub depleted: bool,
}

/// The sensor_msgs/BatteryState values of an [`EnergyReport`] (the ROS bridge and the recording
/// both publish these; the table is in `crate::ros::reports`). NaN = not modelled.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct BatteryFields {
    /// Nominal voltage (V).
    pub voltage: f32,
    /// −current drawn (A): negative while discharging.
    pub current: f32,
    /// Charge (Ah).
    pub charge: f32,
    /// Capacity (Ah), also the design capacity.
    pub capacity: f32,
    /// State of charge 0..1.
    pub percentage: f32,
    /// POWER_SUPPLY_STATUS_*: unknown 0, charging 1, discharging 2, not charging 3.
    pub status: u8,
    /// POWER_SUPPLY_HEALTH_*: unknown 0, good 1, dead 3.
    pub health: u8,
    /// A battery is modelled.
    pub present: bool,
}

impl EnergyReport {
    /// The report as BatteryState values.
    pub fn battery(&self) -> BatteryFields {
        let nan = f32::NAN;
        let modelled = self.capacity_wh.is_some();
        let capacity_ah = match (self.capacity_wh, self.voltage) {
            (Some(wh), Some(v)) if v > 0.0 => Some(wh / v),
            _ => None,
        };
        BatteryFields {
            voltage: self.voltage.map_or(nan, |v| v as f32),
            current: self.current_a.map_or(nan, |a| -a as f32),
            charge: match (capacity_ah, self.state_of_charge) {
                (Some(c), Some(s)) => (c * s) as f32,
                _ => nan,
            },
            capacity: capacity_ah.map_or(nan, |c| c as f32),
            percentage: self.state_of_charge.map_or(nan, |s| s as f32),
            status: if !modelled {
                0
            } else if self.power_w > 0.0 {
                2
            } else if self.power_w < 0.0 {
                1
            } else {
                3
            },
            health: if !modelled {
                0
            } else if self.depleted {
                3
            } else {
                1
            },
            present: modelled,
        }
    }
}

/// What `upright_monitor` reports: is the body still in the plane it settled in.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct UprightReport {
    /// Sim time (s) of the report.
    pub stamp: f64,
    /// False once the body tilted past `max_tilt_deg` or left its settled height by more than
    /// `max_rise_m` (latched with `latch`).
    pub upright: bool,
    /// True once `settle_s` has passed and the reference height was taken.
    pub settled: bool,
    /// Current tilt of the body's +z from world +z (deg).
    pub tilt_deg: f64,
    /// Current height minus the settled reference (m); 0 before settling.
    pub rise_m: f64,
    /// Reference height (m) taken at `settle_s` (NaN before).
    pub reference_z: f64,
    /// Sim time (s) the body was judged fallen (with `latch`, the first time; without, the latest
    /// fall); -1.0 if never.
    pub fallen_time: f64,
    /// Why it fell ("" while upright): `tilt 41.2 deg > 30 deg` or `rise -0.15 m beyond 0.1 m`.
    pub reason: String,
}

/// What `force_limit` reports: did a measured wrench exceed what the task allows.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LimitReport {
    /// Sim time (s) of the report.
    pub stamp: f64,
    /// True once the force or torque magnitude exceeded its limit (latched with `latch`).
    pub tripped: bool,
    /// Why (`reports_as` and the exceeded quantity: `protective_stop: force 41.3 N > 40 N`); ""
    /// while not tripped.
    pub reason: String,
    /// Sim time (s) of the first trip; -1.0 if none.
    pub at_time: f64,
    /// Force magnitude (N) that caused the trip (0 before one).
    pub force: f64,
    /// Torque magnitude (N·m) at the trip (0 before one).
    pub torque: f64,
}

/// A controller lifecycle transition (lifecycle_msgs/msg/TransitionEvent shape: the transition
/// and the primary states before and after it), stamped with sim time.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct TransitionEvent {
    /// Sim time (s) of the transition (TransitionEvent.timestamp is in nanoseconds on the wire).
    pub stamp: f64,
    /// lifecycle_msgs/Transition id (configure 1, cleanup 2, activate 3, deactivate 4, shutdown 5/6).
    pub transition_id: u8,
    /// Transition label (`activate`, ...).
    pub transition_label: String,
    /// lifecycle_msgs/State id before (unconfigured 1, inactive 2, active 3, finalized 4).
    pub start_id: u8,
    /// State label before.
    pub start_label: String,
    /// State id after.
    pub goal_id: u8,
    /// State label after.
    pub goal_label: String,
}

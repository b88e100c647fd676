//! A controller's parameters — what ros2_control's controller node declares — transport-free.
//!
//! In ros2_control every loaded controller is a node of its own whose parameters the controller
//! declares (`joints`, `constraints.goal_time`, ...); a `spawner --param-file` file becomes that
//! node's parameter overrides at load, and the controller reads them on configure (and some at
//! runtime). Here a controller plugin lists the parameters of the controller type it models in
//! its [`crate::handles::controllers::ControllerSpec`], each with the value the world gives it and
//! its [`Effect`]:
//!
//! - [`Effect::Applied`]: the simulator's controller uses the value (the plugin reads it whenever
//!   the registry's parameter generation changes: at load from a parameter file, and on every
//!   accepted set);
//! - [`Effect::Fixed`]: declared as the real controller declares it, but fixed at what the
//!   simulator does (a position-commanded MuJoCo actuator has no PID gains to tune); any other
//!   value is refused, naming the parameter and the reason, so an accepted value always does
//!   something.
//!
//! The ROS side ([`crate::ros`]) serves these as the controller node's parameters; nothing here
//! knows about ROS.

/// A parameter value (the subset of rcl_interfaces/ParameterValue controllers use).
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub enum ParamValue {
    /// bool
    Bool(bool),
    /// integer
    Int(i64),
    /// double
    Double(f64),
    /// string
    Str(String),
    /// string_array
    Strings(Vec<String>),
}

impl ParamValue {
    /// ros2param's name of the type (`ros2 param describe`).
    pub fn type_name(&self) -> &'static str {
        match self {
            ParamValue::Bool(_) => "bool",
            ParamValue::Int(_) => "integer",
            ParamValue::Double(_) => "double",
            ParamValue::Str(_) => "string",
            ParamValue::Strings(_) => "string_array",
        }
    }
    /// The value as a number (integer or double).
    pub fn as_f64(&self) -> Option<f64> {
        match self {
            ParamValue::Double(v) => Some(*v),
            ParamValue::Int(v) => Some(*v as f64),
            _ => None,
        }
    }
    /// The value as a bool.
    pub fn as_bool(&self) -> Option<bool> {
        match self {
            ParamValue::Bool(b) => Some(*b),
            _ => None,
        }
    }
    /// The value as a string list (a string array).
    pub fn as_strings(&self) -> Option<&[String]> {
        match self {
            ParamValue::Strings(s) => Some(s),
            _ => None,
        }
    }
    /// `value` when it has this value's type; `None`: another type. No conversion, not even an
    /// integer written for a double: rclcpp's statically typed parameters refuse `10` for a double
    /// (from a parameter file too), so a file that loads here loads on the robot.
    pub fn coerce(&self, value: ParamValue) -> Option<ParamValue> {
        (std::mem::discriminant(self) == std::mem::discriminant(&value)).then_some(value)
    }
}

impl std::fmt::Display for ParamValue {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ParamValue::Bool(b) => write!(f, "{b}"),
            ParamValue::Int(i) => write!(f, "{i}"),
            ParamValue::Double(d) => write!(f, "{d}"),
            ParamValue::Str(s) => write!(f, "'{s}'"),
            ParamValue::Strings(s) => write!(f, "[{}]", s.join(", ")),
        }
    }
}

/// What a parameter does in the simulator.
#[derive(Debug, Clone, PartialEq)]
pub enum Effect {
    /// The simulator's controller uses the value; `min`: the lowest value accepted (numbers).
    Applied {
        /// Lowest accepted value, if bounded.
        min: Option<f64>,
    },
    /// Fixed at the declared value; another value is refused with this reason.
    Fixed(String),
}

/// One declared parameter of a controller.
#[derive(Debug, Clone, PartialEq)]
pub struct ParamSpec {
    /// Its name on the controller node (`constraints.goal_time`).
    pub name: String,
    /// Its value (the world's, until a parameter file or a set changes an applied one).
    pub value: ParamValue,
    /// Refuses sets once the node exists (a parameter file still gives it at load), as the real
    /// controller declares it.
    pub read_only: bool,
    /// `ros2 param describe` text.
    pub description: String,
    /// What it does here.
    pub effect: Effect,
}

impl ParamSpec {
    /// A parameter the simulator applies.
    pub fn applied(name: &str, value: ParamValue, read_only: bool, description: &str) -> ParamSpec {
        ParamSpec {
            name: name.to_string(),
            value,
            read_only,
            description: description.to_string(),
            effect: Effect::Applied { min: None },
        }
    }
    /// A parameter fixed at `value`; `why` says why another value cannot be honoured.
    pub fn fixed(name: &str, value: ParamValue, read_only: bool, why: &str) -> ParamSpec {
        ParamSpec {
            name: name.to_string(),
            value,
            read_only,
            description: format!("fixed in roqsim: {why}"),
            effect: Effect::Fixed(why.to_string()),
        }
    }
    /// The lowest accepted value of an applied number.
    pub fn min(mut self, min: f64) -> ParamSpec {
        if let Effect::Applied { min: m } = &mut self.effect {
            *m = Some(min);
        }
        self
    }
    /// `value` as this parameter's value, or why it cannot be (type, bound, a fixed value).
    pub fn accept(&self, value: ParamValue) -> Result<ParamValue, String> {
        let Some(v) = self.value.coerce(value.clone()) else {
            // rclcpp's words (rclcpp::exceptions::InvalidParameterTypeException).
            return Err(format!(
                "Wrong parameter type, parameter {{{}}} is of type {{{}}}, setting it to {{{}}} is not allowed.",
                self.name,
                self.value.type_name(),
                value.type_name()
            ));
        };
        match &self.effect {
            Effect::Applied { min } => {
                if let (Some(m), Some(x)) = (min, v.as_f64()) {
                    if !(x.is_finite() && x >= *m) {
                        return Err(format!("`{}` must be >= {m}, got {v}", self.name));
                    }
                }
                Ok(v)
            }
            Effect::Fixed(why) if v != self.value => Err(format!(
                "`{}` = {v} is not supported: {why} (the simulator's value is {})",
                self.name, self.value
            )),
            Effect::Fixed(_) => Ok(v),
        }
    }
}

/// The parameters controller_interface's base class declares on every controller node
/// (`update_rate`, `is_async`, `thread_priority`), with the simulator's values: the controllers
/// run synchronously every physics step.
pub fn base(update_rate: u32) -> Vec<ParamSpec> {
    vec![
        ParamSpec::fixed(
            "update_rate",
            ParamValue::Int(update_rate as i64),
            false,
            "the controller runs every physics step (the world's sim.timestep sets the rate)",
        ),
        ParamSpec::fixed(
            "is_async",
            ParamValue::Bool(false),
            false,
            "controllers run synchronously on the physics thread",
        ),
        ParamSpec::fixed(
            "thread_priority",
            ParamValue::Int(-100),
            false,
            "there is no controller thread (they run on the physics thread)",
        ),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn applied_and_fixed_values() {
        let g = ParamSpec::applied("constraints.goal_time", ParamValue::Double(1.0), false, "s")
            .min(0.0);
        assert_eq!(g.accept(ParamValue::Double(2.0)), Ok(ParamValue::Double(2.0)));
        assert_eq!(
            g.accept(ParamValue::Int(2)).unwrap_err(),
            "Wrong parameter type, parameter {constraints.goal_time} is of type {double}, setting it to {integer} is not allowed."
        );
        assert_eq!(
            g.accept(ParamValue::Double(-1.0)).unwrap_err(),
            "`constraints.goal_time` must be >= 0, got -1"
        );
        assert_eq!(
            g.accept(ParamValue::Str("x".into())).unwrap_err(),
            "Wrong parameter type, parameter {constraints.goal_time} is of type {double}, setting it to {string} is not allowed."
        );
        let f = ParamSpec::fixed(
            "command_interfaces",
            ParamValue::Strings(vec!["position".into()]),
            true,
            "the arm's actuators take positions",
        );
        assert!(f.accept(ParamValue::Strings(vec!["position".into()])).is_ok());
        assert_eq!(
            f.accept(ParamValue::Strings(vec!["velocity".into()])).unwrap_err(),
            "`command_interfaces` = [velocity] is not supported: the arm's actuators take positions (the simulator's value is [position])"
        );
    }
}

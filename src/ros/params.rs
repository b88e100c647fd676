//! ROS 2 parameters on an r2r node, served the way rclcpp serves them, so `ros2 param
//! list/get/set/describe/dump` and every tool built on ros2param's `AsyncParameterClient` (which
//! waits for all six services) work against roqsim's nodes.
//!
//! * The six `rcl_interfaces` services under the node's name: `list_parameters`,
//!   `get_parameters`, `get_parameter_types`, `describe_parameters`, `set_parameters`,
//!   `set_parameters_atomically`.
//! * Every declaration and every accepted change is published on `/parameter_events`
//!   (rcl_interfaces/ParameterEvent, rclcpp's parameter-events QoS: reliable, keep last 1000).
//! * rclcpp's answers to undeclared names: `get_parameters`, `get_parameter_types` and
//!   `describe_parameters` answer an empty list when any name is not declared (ros2param then
//!   prints "Parameter not set"); `set_parameters` refuses an undeclared name unless the node
//!   allows undeclared parameters (the controller manager does, as ros2_control's does).
//! * A read-only parameter refuses every set with rclcpp's reason text; a declared parameter
//!   keeps its type (no dynamic typing).
//!
//! The table is shared (`Arc<Mutex<..>>`): the controller manager reads what `spawner` set
//! (`<controller>.type`, `<controller>.params_file`) when a load request comes in.
//!
//! r2r's own `make_parameter_handler` is not used: it has no read-only parameters, no
//! `/parameter_events` and accepts any set.

use std::sync::{Arc, Mutex};

use futures::StreamExt;
use r2r::rcl_interfaces::msg::{
    ListParametersResult, Parameter as ParamMsg, ParameterDescriptor, ParameterEvent,
    ParameterType, ParameterValue, SetParametersResult,
};
use r2r::rcl_interfaces::srv::{
    DescribeParameters, GetParameterTypes, GetParameters, ListParameters, SetParameters,
    SetParametersAtomically,
};
use r2r::QosProfile;

use crate::handles::controller_params::ParamValue;
use crate::ros::convert::{self, Task};

/// One declared parameter.
#[derive(Debug, Clone)]
pub struct Param {
    /// Its name (`use_sim_time`, `scaled_joint_trajectory_controller.type`).
    pub name: String,
    /// Its value (its type is the value's).
    pub value: ParameterValue,
    /// Refuses every set.
    pub read_only: bool,
    /// `ros2 param describe` text.
    pub description: String,
}

/// Extra refusal of a set (`Some(reason)`), after the read-only and type checks.
pub type Validator = Arc<dyn Fn(&str, &ParameterValue) -> Option<String> + Send + Sync>;
/// Called after every accepted set with the parameter's new value.
pub type OnSet = Arc<dyn Fn(&str, &ParameterValue) + Send + Sync>;

/// A node's parameter table.
#[derive(Default)]
pub struct Table {
    params: Vec<Param>,
    allow_undeclared: bool,
    validate: Option<Validator>,
    on_set: Option<OnSet>,
}

impl std::fmt::Debug for Table {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Table")
            .field("params", &self.params)
            .field("allow_undeclared", &self.allow_undeclared)
            .finish_non_exhaustive()
    }
}

/// Shared handle to a node's table.
pub type Shared = Arc<Mutex<Table>>;

impl Table {
    /// An empty table; `allow_undeclared`: a set of an unknown name declares it (rclcpp's
    /// `allow_undeclared_parameters`).
    pub fn new(allow_undeclared: bool) -> Table {
        Table { params: Vec::new(), allow_undeclared, validate: None, on_set: None }
    }

    /// Refuse sets `validate` refuses (after the read-only and type checks) and call `on_set`
    /// after each accepted one (a controller node hands its values to the simulation).
    pub fn hooks(&mut self, validate: Validator, on_set: OnSet) {
        self.validate = Some(validate);
        self.on_set = Some(on_set);
    }

    /// Declare (or redeclare) a parameter.
    pub fn declare(
        &mut self,
        name: &str,
        value: ParameterValue,
        read_only: bool,
        description: &str,
    ) {
        let p = Param {
            name: name.to_string(),
            value,
            read_only,
            description: description.to_string(),
        };
        match self.params.iter_mut().find(|q| q.name == name) {
            Some(q) => *q = p,
            None => self.params.push(p),
        }
    }

    /// A parameter by name.
    pub fn get(&self, name: &str) -> Option<&Param> {
        self.params.iter().find(|p| p.name == name)
    }

    /// Every parameter, in declaration order.
    pub fn all(&self) -> &[Param] {
        &self.params
    }

    /// Why `value` cannot be set on `name` (`None`: it can).
    pub fn check(&self, name: &str, value: &ParameterValue) -> Option<String> {
        match self.get(name) {
            Some(p) if p.read_only => Some(format!("Trying to set a read-only parameter: {name}.")),
            // NOT_SET undeclares; every parameter here is statically typed, as rclcpp refuses it.
            Some(_) if value.type_ == ParameterType::PARAMETER_NOT_SET as u8 => {
                Some("cannot undeclare a statically typed parameter".to_string())
            }
            Some(p) if p.value.type_ != value.type_ => Some(format!(
                "Wrong parameter type, parameter {{{name}}} is of type {{{}}}, setting it to {{{}}} is not allowed.",
                type_name(p.value.type_),
                type_name(value.type_)
            )),
            Some(_) => self.validate.as_ref().and_then(|v| v(name, value)),
            None if self.allow_undeclared => None,
            None => Some(format!("parameter '{name}' is not declared on this node")),
        }
    }

    /// Set (after [`Table::check`]); returns whether it was new.
    fn set(&mut self, name: &str, value: ParameterValue) -> bool {
        if let Some(f) = &self.on_set {
            f(name, &value);
        }
        match self.params.iter_mut().find(|p| p.name == name) {
            Some(p) => {
                p.value = value;
                false
            }
            None => {
                self.declare(name, value, false, "");
                true
            }
        }
    }
}

/// ros2param's type names (`ros2 param describe`).
pub fn type_name(t: u8) -> &'static str {
    match t {
        1 => "bool",
        2 => "integer",
        3 => "double",
        4 => "string",
        5 => "byte_array",
        6 => "bool_array",
        7 => "integer_array",
        8 => "double_array",
        9 => "string_array",
        _ => "not set",
    }
}

/// A bool value.
pub fn bool_value(v: bool) -> ParameterValue {
    ParameterValue {
        type_: ParameterType::PARAMETER_BOOL as u8,
        bool_value: v,
        ..Default::default()
    }
}
/// An integer value.
pub fn int_value(v: i64) -> ParameterValue {
    ParameterValue {
        type_: ParameterType::PARAMETER_INTEGER as u8,
        integer_value: v,
        ..Default::default()
    }
}
/// A double value.
pub fn double_value(v: f64) -> ParameterValue {
    ParameterValue {
        type_: ParameterType::PARAMETER_DOUBLE as u8,
        double_value: v,
        ..Default::default()
    }
}
/// A string value.
pub fn string_value(v: &str) -> ParameterValue {
    ParameterValue {
        type_: ParameterType::PARAMETER_STRING as u8,
        string_value: v.to_string(),
        ..Default::default()
    }
}
/// A string array value.
pub fn strings_value(v: &[String]) -> ParameterValue {
    ParameterValue {
        type_: ParameterType::PARAMETER_STRING_ARRAY as u8,
        string_array_value: v.to_vec(),
        ..Default::default()
    }
}

/// A controller parameter's value as a message value.
pub fn to_ros(v: &ParamValue) -> ParameterValue {
    match v {
        ParamValue::Bool(b) => bool_value(*b),
        ParamValue::Int(i) => int_value(*i),
        ParamValue::Double(d) => double_value(*d),
        ParamValue::Str(s) => string_value(s),
        ParamValue::Strings(s) => strings_value(s),
    }
}

/// A message value as a controller parameter's value (`None`: a type no controller parameter
/// here has: byte, bool, integer and double arrays, or not set).
pub fn from_ros(v: &ParameterValue) -> Option<ParamValue> {
    Some(match v.type_ {
        t if t == ParameterType::PARAMETER_BOOL as u8 => ParamValue::Bool(v.bool_value),
        t if t == ParameterType::PARAMETER_INTEGER as u8 => ParamValue::Int(v.integer_value),
        t if t == ParameterType::PARAMETER_DOUBLE as u8 => ParamValue::Double(v.double_value),
        t if t == ParameterType::PARAMETER_STRING as u8 => ParamValue::Str(v.string_value.clone()),
        t if t == ParameterType::PARAMETER_STRING_ARRAY as u8 => {
            ParamValue::Strings(v.string_array_value.clone())
        }
        _ => return None,
    })
}

/// A parameter override given on the command line / in a `--params-file` for this node (r2r
/// reads them into `node.params` when it creates the node), as a message value.
pub fn override_of(node: &r2r::Node, name: &str) -> Option<ParameterValue> {
    let params = node.params.lock().ok()?;
    let v = &params.get(name)?.value;
    Some(match v {
        r2r::ParameterValue::Bool(b) => bool_value(*b),
        r2r::ParameterValue::Integer(i) => int_value(*i),
        r2r::ParameterValue::Double(d) => double_value(*d),
        r2r::ParameterValue::String(s) => string_value(s),
        r2r::ParameterValue::StringArray(s) => strings_value(s),
        _ => return None,
    })
}

/// The string values of a parameter (a string, or a string array: `spawner` sets
/// `<controller>.params_file` from a Python list's text, which rclpy parses into an array).
pub fn strings_of(v: &ParameterValue) -> Vec<String> {
    match v.type_ {
        t if t == ParameterType::PARAMETER_STRING as u8 => {
            let s = v.string_value.trim();
            // `['/a.yaml', '/b.yaml']` as one string (a caller that did not parse it).
            if s.starts_with('[') && s.ends_with(']') {
                s[1..s.len() - 1]
                    .split(',')
                    .map(|x| x.trim().trim_matches(|c| c == '\'' || c == '"').to_string())
                    .filter(|x| !x.is_empty())
                    .collect()
            } else if s.is_empty() {
                Vec::new()
            } else {
                vec![s.to_string()]
            }
        }
        t if t == ParameterType::PARAMETER_STRING_ARRAY as u8 => v.string_array_value.clone(),
        _ => Vec::new(),
    }
}

fn event(node: &str, new: Vec<ParamMsg>, changed: Vec<ParamMsg>) -> ParameterEvent {
    ParameterEvent {
        stamp: convert::stamp(crate::ros::services::sim_time()),
        node: node.to_string(),
        new_parameters: new,
        changed_parameters: changed,
        deleted_parameters: Vec::new(),
    }
}

fn msg(p: &Param) -> ParamMsg {
    ParamMsg { name: p.name.clone(), value: p.value.clone() }
}

/// rclcpp's parameter-events QoS: reliable, volatile, keep last 1000.
fn events_qos() -> QosProfile {
    QosProfile::default().keep_last(1000).reliable().volatile()
}

/// Serve `table` on `node` (whose fully qualified name is `fq`): the six services and
/// `/parameter_events` (one event announcing every declared parameter now, one per accepted set).
pub fn serve(node: &mut r2r::Node, fq: &str, table: Shared) -> Result<Vec<Task>, String> {
    let events = node
        .create_publisher::<ParameterEvent>("/parameter_events", events_qos())
        .map_err(|e| format!("cannot create /parameter_events for {fq}: {e}"))?;
    {
        let t = table.lock().map_err(|_| "parameter table poisoned".to_string())?;
        if !t.params.is_empty() {
            let _ = events.publish(&event(fq, t.params.iter().map(msg).collect(), Vec::new()));
        }
    }
    let name = |s: &str| format!("{fq}/{s}");
    let err = |s: &str, e: r2r::Error| format!("cannot create the parameter service {fq}/{s}: {e}");
    let mut tasks: Vec<Task> = Vec::new();

    let t = table.clone();
    let s = node
        .create_service::<ListParameters::Service>(&name("list_parameters"), QosProfile::default())
        .map_err(|e| err("list_parameters", e))?;
    tasks.push(Box::pin(s.for_each(move |req| {
        let t = t.lock().expect("parameter table");
        let q = &req.message;
        let names: Vec<&str> = t.params.iter().map(|p| p.name.as_str()).collect();
        let result = list(&names, &q.prefixes, q.depth);
        let _ = req.respond(ListParameters::Response { result });
        futures::future::ready(())
    })));

    let t = table.clone();
    let s = node
        .create_service::<GetParameters::Service>(&name("get_parameters"), QosProfile::default())
        .map_err(|e| err("get_parameters", e))?;
    tasks.push(Box::pin(s.for_each(move |req| {
        let t = t.lock().expect("parameter table");
        let found: Option<Vec<ParameterValue>> =
            req.message.names.iter().map(|n| t.get(n).map(|p| p.value.clone())).collect();
        let _ = req.respond(GetParameters::Response { values: found.unwrap_or_default() });
        futures::future::ready(())
    })));

    let t = table.clone();
    let s = node
        .create_service::<GetParameterTypes::Service>(
            &name("get_parameter_types"),
            QosProfile::default(),
        )
        .map_err(|e| err("get_parameter_types", e))?;
    tasks.push(Box::pin(s.for_each(move |req| {
        let t = t.lock().expect("parameter table");
        let found: Option<Vec<u8>> =
            req.message.names.iter().map(|n| t.get(n).map(|p| p.value.type_)).collect();
        let _ = req.respond(GetParameterTypes::Response { types: found.unwrap_or_default() });
        futures::future::ready(())
    })));

    let t = table.clone();
    let s = node
        .create_service::<DescribeParameters::Service>(
            &name("describe_parameters"),
            QosProfile::default(),
        )
        .map_err(|e| err("describe_parameters", e))?;
    tasks.push(Box::pin(s.for_each(move |req| {
        let t = t.lock().expect("parameter table");
        let found: Option<Vec<ParameterDescriptor>> = req
            .message
            .names
            .iter()
            .map(|n| {
                t.get(n).map(|p| ParameterDescriptor {
                    name: p.name.clone(),
                    type_: p.value.type_,
                    description: p.description.clone(),
                    read_only: p.read_only,
                    ..Default::default()
                })
            })
            .collect();
        let _ =
            req.respond(DescribeParameters::Response { descriptors: found.unwrap_or_default() });
        futures::future::ready(())
    })));

    let (t, pubr, fq1) = (table.clone(), events.clone(), fq.to_string());
    let s = node
        .create_service::<SetParameters::Service>(&name("set_parameters"), QosProfile::default())
        .map_err(|e| err("set_parameters", e))?;
    tasks.push(Box::pin(s.for_each(move |req| {
        let mut t = t.lock().expect("parameter table");
        let mut results = Vec::new();
        for p in &req.message.parameters {
            match t.check(&p.name, &p.value) {
                Some(reason) => {
                    tracing::warn!("{fq1}: set_parameters {}: {reason}", p.name);
                    results.push(SetParametersResult { successful: false, reason })
                }
                None => {
                    let new = t.set(&p.name, p.value.clone());
                    let m = vec![p.clone()];
                    let ev = if new { event(&fq1, m, vec![]) } else { event(&fq1, vec![], m) };
                    let _ = pubr.publish(&ev);
                    results.push(SetParametersResult { successful: true, reason: String::new() })
                }
            }
        }
        let _ = req.respond(SetParameters::Response { results });
        futures::future::ready(())
    })));

    let (t, pubr, fq1) = (table, events, fq.to_string());
    let s = node
        .create_service::<SetParametersAtomically::Service>(
            &name("set_parameters_atomically"),
            QosProfile::default(),
        )
        .map_err(|e| err("set_parameters_atomically", e))?;
    tasks.push(Box::pin(s.for_each(move |req| {
        let mut t = t.lock().expect("parameter table");
        let ps = &req.message.parameters;
        let refusal = ps.iter().find_map(|p| t.check(&p.name, &p.value));
        let result = match refusal {
            Some(reason) => SetParametersResult { successful: false, reason },
            None => {
                let (mut new, mut changed) = (Vec::new(), Vec::new());
                for p in ps {
                    if t.set(&p.name, p.value.clone()) {
                        new.push(p.clone())
                    } else {
                        changed.push(p.clone())
                    }
                }
                let _ = pubr.publish(&event(&fq1, new, changed));
                SetParametersResult { successful: true, reason: String::new() }
            }
        };
        let _ = req.respond(SetParametersAtomically::Response { result });
        futures::future::ready(())
    })));
    Ok(tasks)
}

/// rclcpp's list_parameters: with no prefixes, every name with fewer than `depth` separators
/// (`0` = recursive); with prefixes, the names equal to one or under it; `prefixes` of the
/// result are the distinct parents of the names returned.
pub fn list(names: &[&str], prefixes: &[String], depth: u64) -> ListParametersResult {
    const SEP: char = '.';
    let recursive = depth == 0;
    let mut out = ListParametersResult::default();
    for &n in names {
        let all = prefixes.is_empty() && (recursive || (n.matches(SEP).count() as u64) < depth);
        let under = prefixes.iter().any(|p| {
            n == p
                || n.strip_prefix(p.as_str())
                    .and_then(|r| r.strip_prefix(SEP))
                    .is_some_and(|r| recursive || (r.matches(SEP).count() as u64) < depth)
        });
        if all || under {
            out.names.push(n.to_string());
            if let Some(i) = n.rfind(SEP) {
                let parent = n[..i].to_string();
                if !out.prefixes.contains(&parent) {
                    out.prefixes.push(parent);
                }
            }
        }
    }
    out
}

//! Node-name and namespace remaps of the whole process (`--ros-args -r __node:=X -r __ns:=/Y`,
//! what `ros2 launch`'s `Node(name=, namespace=)` passes) applied to roqsim's main node only.
//!
//! rcl applies an untargeted `__node` / `__ns` rule to every node the process creates, so the
//! bridge node, the simulation_interfaces node and every robot's `controller_manager` would all
//! come up as `/Y/X` — one name several times, which breaks `ros2 node`, `ros2 param` and the
//! spawner. The `roqsim` binary therefore lifts those rules out of its arguments before rcl sees
//! them (it re-executes itself without them) and hands their values over in
//! [`NODE_NAME_ENV`] / [`NAMESPACE_ENV`]: the bridge node takes the name and the namespace, the
//! simulation_interfaces node the namespace, and each `controller_manager` stays in its robot's
//! namespace. Rules targeted at one node (`roqsim:__node:=X`) already affect that node only and
//! are left as they are. ROS-free: plain `cargo test` covers it.

/// Environment variable carrying a lifted `__node:=` value.
pub const NODE_NAME_ENV: &str = "ROQSIM_ROS_NODE_NAME";
/// Environment variable carrying a lifted `__ns:=` value.
pub const NAMESPACE_ENV: &str = "ROQSIM_ROS_NAMESPACE";

/// The arguments without the lifted rules, and the lifted values.
#[derive(Debug, Clone, PartialEq)]
pub struct Lifted {
    /// The process arguments (argv[0] included) without the lifted `-r RULE` pairs.
    pub args: Vec<String>,
    /// The `__node:=` (or `__name:=`) value, if one was lifted.
    pub node: Option<String>,
    /// The `__ns:=` value, if one was lifted.
    pub namespace: Option<String>,
}

/// Lift every untargeted `__node:=`/`__name:=`/`__ns:=` remap out of the `--ros-args` sections
/// of `args`; `None` when there is none (nothing to do). The last rule of a kind wins, as in rcl.
pub fn lift(args: &[String]) -> Option<Lifted> {
    let mut out = Vec::with_capacity(args.len());
    let (mut node, mut namespace) = (None, None);
    let mut in_ros = false;
    let mut i = 0;
    while i < args.len() {
        let a = &args[i];
        if a == "--ros-args" {
            in_ros = true;
        } else if in_ros && a == "--" {
            in_ros = false;
        } else if in_ros && (a == "-r" || a == "--remap") && i + 1 < args.len() {
            let rule = &args[i + 1];
            if let Some(v) = rule.strip_prefix("__node:=").or_else(|| rule.strip_prefix("__name:="))
            {
                node = Some(v.to_string());
                i += 2;
                continue;
            }
            if let Some(v) = rule.strip_prefix("__ns:=") {
                namespace = Some(v.to_string());
                i += 2;
                continue;
            }
            out.push(a.clone());
            out.push(rule.clone());
            i += 2;
            continue;
        }
        out.push(a.clone());
        i += 1;
    }
    if node.is_none() && namespace.is_none() {
        return None;
    }
    Some(Lifted { args: out, node, namespace })
}

/// The name and namespace the main node takes: a lifted remap wins over the configured name.
pub fn main_node(configured: &str) -> (String, String) {
    let name = std::env::var(NODE_NAME_ENV).ok().filter(|s| !s.is_empty());
    (name.unwrap_or_else(|| configured.to_string()), namespace())
}

/// The namespace the process's nodes take (a lifted `__ns:=`; "" = none).
pub fn namespace() -> String {
    std::env::var(NAMESPACE_ENV).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(s: &str) -> Vec<String> {
        s.split_whitespace().map(str::to_string).collect()
    }

    #[test]
    fn lifts_untargeted_node_and_namespace_rules() {
        let l = lift(&v("roqsim sim w.yaml --ros --ros-args -r __node:=roqsim -r __ns:=/sim -r /a:=/b --params-file /tmp/p.yaml")).unwrap();
        assert_eq!(
            l.args,
            v("roqsim sim w.yaml --ros --ros-args -r /a:=/b --params-file /tmp/p.yaml")
        );
        assert_eq!((l.node.as_deref(), l.namespace.as_deref()), (Some("roqsim"), Some("/sim")));
        // Last wins; `--remap` and `__name` spellings.
        let l = lift(&v("x --ros-args --remap __name:=a -r __node:=b --")).unwrap();
        assert_eq!(
            (l.args, l.node.as_deref(), l.namespace),
            (v("x --ros-args --"), Some("b"), None)
        );
        // Targeted rules and rules outside --ros-args stay; nothing to lift -> None.
        assert_eq!(lift(&v("x --ros-args -r roqsim:__node:=a")), None);
        assert_eq!(lift(&v("x -r __node:=a")), None);
        assert_eq!(lift(&v("x --ros-args -r a:=b -- -r __node:=c")), None);
    }
}

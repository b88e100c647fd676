//! The ROS 2 bridge inside the engine, in one process (feature `ros`; needs the ROS environment of
//! scripts/env.sh at run time, as `cargo test --features ros` in scripts/test.sh has it).
//!
//! An r2r node of the test itself, in the same context, is the peer: a cmd_vel it publishes must
//! reach the diff drive through a command posted to the physics thread, /tf_static must be latched,
//! and the bridge's gated streams must be in the rate table. The end-to-end behaviour against a
//! separate rclpy process is in test/e2e/test_ros_node.py.
#![cfg(feature = "ros")]

use std::path::Path;
use std::time::{Duration, Instant};

use futures::StreamExt;
use roqsim::world::overrides::parse_set;
use roqsim::{load_world, Engine, EngineOptions, LoadOptions};

fn engine(sets: &[&str]) -> Engine {
    let world = Path::new(env!("CARGO_MANIFEST_DIR")).join("worlds/turtlebot_empty.yaml");
    let opts = LoadOptions {
        ros: true,
        assignments: sets.iter().map(|s| parse_set(s).unwrap()).collect(),
        ..Default::default()
    };
    let w = load_world(&world, &opts).expect("world loads");
    Engine::new(w, EngineOptions { profile: false, seed: Some(1) }).expect("engine with the bridge")
}

#[test]
fn bridge_in_process() {
    // A private DDS domain for this process: nothing else on the host sees these topics.
    std::env::set_var("ROS_DOMAIN_ID", format!("{}", 101 + std::process::id() % 100));
    std::env::set_var("ROS_AUTOMATIC_DISCOVERY_RANGE", "LOCALHOST");
    let ns = "rb_test";
    let mut e = engine(&[
        &format!("components.ros2_bridge.namespace={ns}"),
        "components.ros2_bridge.clock_rate_hz=30",
        "components.ros2_bridge.rates.imu=20",
    ]);

    // Gated publications, requested vs realised, including the bridge's own streams.
    let rows = e.ctx.interface.rate_table();
    let row = |name: &str| {
        rows.iter()
            .find(|r| r.name == name)
            .unwrap_or_else(|| panic!("no rate row {name}: {rows:?}"))
            .clone()
    };
    let clock = row("ros2 /clock");
    assert_eq!((clock.requested_hz, clock.every_steps), (30.0, 17));
    assert_eq!(clock.realised_hz, 500.0 / 17.0);
    let imu = row("ros2 /rb_test/imu (rates override of imu)");
    assert_eq!(
        (imu.requested_hz, imu.realised_hz, imu.every_steps),
        (20.0, 20.0, 25),
        "imu at 100 Hz (every 5) forwarded every 25 steps"
    );
    assert_eq!(row("odom").realised_hz, 50.0);

    // The test's own node in the same context.
    let ctx = r2r::Context::create().unwrap();
    let mut peer = r2r::Node::create(ctx, "bridge_test_peer", "").unwrap();
    let cmd = peer
        .create_publisher::<r2r::geometry_msgs::msg::Twist>(
            &format!("/{ns}/cmd_vel"),
            r2r::QosProfile::default(),
        )
        .unwrap();
    let qos_latched = r2r::QosProfile::default()
        .keep_last(10)
        .durability(r2r::qos::DurabilityPolicy::TransientLocal);
    let mut statics =
        peer.subscribe::<r2r::tf2_msgs::msg::TFMessage>("/tf_static", qos_latched).unwrap();
    let mut odom = peer
        .subscribe::<r2r::nav_msgs::msg::Odometry>(
            &format!("/{ns}/odom"),
            r2r::QosProfile::default(),
        )
        .unwrap();

    e.step_n(10).unwrap();
    // No external subscriber when the bridge first looked: has_subscribers reported false.
    let scan = e.ctx.interface.all().iter().position(|ep| ep.name == "scan").unwrap();
    assert_eq!(e.ctx.interface.get(scan).has_subscribers, Some(false));

    // Drive: publish 0.2 m/s while stepping until the posted commands reach the diff drive.
    let mut tmsg = r2r::geometry_msgs::msg::Twist::default();
    tmsg.linear.x = 0.2;
    let t_end = Instant::now() + Duration::from_secs(20);
    let mut got_static = None;
    let mut last_odom = None;
    let mut moving_steps = 0;
    while Instant::now() < t_end && moving_steps < 500 {
        cmd.publish(&tmsg).unwrap();
        peer.spin_once(Duration::from_millis(2));
        while let Some(Some(m)) = statics.now_or_never_opt() {
            got_static = Some(m);
        }
        while let Some(Some(m)) = odom.now_or_never_opt() {
            last_odom = Some(m);
        }
        e.step_n(5).unwrap();
        if last_odom
            .as_ref()
            .is_some_and(|o: &r2r::nav_msgs::msg::Odometry| o.twist.twist.linear.x > 0.15)
        {
            moving_steps += 5;
        }
    }
    let o = last_odom.expect("odom received in process");
    assert!(
        o.twist.twist.linear.x > 0.15,
        "cmd_vel reached the drive: odom vx {}",
        o.twist.twist.linear.x
    );
    assert_eq!(
        (o.header.frame_id.as_str(), o.child_frame_id.as_str()),
        ("odom", "base_link"),
        "frames follow the endpoint's prefix, not the bridge topic namespace"
    );
    let s = got_static.expect("/tf_static latched");
    let pairs: Vec<(String, String)> = s
        .transforms
        .iter()
        .map(|t| (t.header.frame_id.clone(), t.child_frame_id.clone()))
        .collect();
    for p in
        [("base_link", "shell_link"), ("shell_link", "rplidar_link"), ("base_link", "imu_link")]
    {
        assert!(
            pairs.contains(&(p.0.to_string(), p.1.to_string())),
            "{p:?} missing from the latched set {pairs:?}"
        );
    }
    e.shutdown();
}

/// Poll a stream once without blocking.
trait NowOrNever: futures::Stream + Unpin {
    fn now_or_never_opt(&mut self) -> Option<Option<Self::Item>>;
}

impl<S: futures::Stream + Unpin> NowOrNever for S {
    fn now_or_never_opt(&mut self) -> Option<Option<Self::Item>> {
        use futures::FutureExt;
        self.next().now_or_never()
    }
}

//! Converters for the observers' structured reports that have a standard ROS message of their own
//! ("the message a real platform publishes, so a stack that already watches a battery needs no
//! change"). Registered in [`crate::ros::convert::make_outbound`].
//!
//! `EnergyReport` → `sensor_msgs/msg/BatteryState` (sensor_msgs 5.3, Jazzy), field by field:
//!
//! | BatteryState | from the report |
//! | --- | --- |
//! | `header.stamp` | the report's sim time; `frame_id` the endpoint's `frame_id` hint, else empty |
//! | `voltage` | nominal `voltage` (V); NaN when unknown |
//! | `current` | −`current_a` (A): negative while the actuators draw (BatteryState's sign); NaN without a voltage |
//! | `charge`, `capacity`, `design_capacity` | Ah = Wh / V (`state_of_charge` × capacity for the charge); NaN without capacity and voltage |
//! | `percentage` | `state_of_charge` 0..1; NaN when no capacity is modelled |
//! | `power_supply_status` | DISCHARGING (2) while drawing, CHARGING (1) while regenerating (net negative power), NOT_CHARGING (3) idle; UNKNOWN (0) with no battery modelled |
//! | `power_supply_health` | DEAD (3) once `depleted`, else GOOD (1); UNKNOWN (0) with no battery modelled |
//! | `present` | a battery is modelled (`capacity_wh` given) |
//! | `temperature`, technology, cells, location, serial | NaN / UNKNOWN / empty: not modelled |

use r2r::sensor_msgs::msg::BatteryState;

use crate::context::payload::Payload;
use crate::ros::convert::Frames;

/// Fill a BatteryState from an EnergyReport (see the module table).
pub fn fill_battery(m: &mut BatteryState, p: &Payload, fr: &Frames) -> Result<(), String> {
    let Payload::EnergyReport(r) = p else {
        return Err(format!("a {} payload cannot be published as sensor_msgs/msg/BatteryState (it takes: EnergyReport)", p.kind()));
    };
    m.header.stamp = crate::ros::convert::stamp(r.stamp);
    fr.write("", &mut m.header.frame_id);
    let b = r.battery();
    m.voltage = b.voltage;
    m.temperature = f32::NAN;
    m.current = b.current;
    m.capacity = b.capacity;
    m.design_capacity = b.capacity;
    m.charge = b.charge;
    m.percentage = b.percentage;
    m.power_supply_status = b.status;
    m.power_supply_health = b.health;
    m.power_supply_technology = BatteryState::POWER_SUPPLY_TECHNOLOGY_UNKNOWN as u8;
    m.present = b.present;
    m.cell_voltage.clear();
    m.cell_temperature.clear();
    m.location.clear();
    m.serial_number.clear();
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::context::payload::EnergyReport;

    #[test]
    fn battery_state_from_an_energy_report() {
        let fr = Frames { prefix: "robot/".into(), hint: Some("base_link".into()) };
        let r = EnergyReport {
            stamp: 2.5,
            power_w: 24.0,
            state_of_charge: Some(0.75),
            capacity_wh: Some(48.0),
            voltage: Some(12.0),
            current_a: Some(2.0),
            ..Default::default()
        };
        let mut m = BatteryState::default();
        fill_battery(&mut m, &Payload::EnergyReport(r.clone()), &fr).unwrap();
        assert_eq!((m.header.stamp.sec, m.header.stamp.nanosec), (2, 500_000_000));
        assert_eq!(m.header.frame_id, "robot/base_link");
        assert_eq!(
            (m.voltage, m.current, m.capacity, m.charge, m.percentage),
            (12.0, -2.0, 4.0, 3.0, 0.75)
        );
        assert_eq!((m.power_supply_status, m.power_supply_health, m.present), (2, 1, true));
        let bare = EnergyReport { stamp: 1.0, power_w: 5.0, ..Default::default() };
        fill_battery(&mut m, &Payload::EnergyReport(bare), &fr).unwrap();
        assert!(
            m.voltage.is_nan() && m.current.is_nan() && m.percentage.is_nan() && m.charge.is_nan()
        );
        assert_eq!((m.power_supply_status, m.power_supply_health, m.present), (0, 0, false));
        let dead = EnergyReport { depleted: true, state_of_charge: Some(0.0), ..r };
        fill_battery(&mut m, &Payload::EnergyReport(dead), &fr).unwrap();
        assert_eq!(m.power_supply_health, 3);
        let e = fill_battery(&mut m, &Payload::Bool(true), &fr).unwrap_err();
        assert!(
            e.contains("a Bool payload cannot be published as sensor_msgs/msg/BatteryState"),
            "{e}"
        );
    }
}

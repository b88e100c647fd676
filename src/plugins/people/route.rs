//! A walker's patrol: the waypoints in turn, reached within an arrival radius, with a dwell at
//! each (fixed, or drawn from the run's seeded generator at the moment of arrival).

use crate::nav::orca::{norm, V2};

/// How long to stand at a waypoint.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Dwell {
    /// Seconds.
    Fixed(f64),
    /// Uniform in [lo, hi] seconds, drawn on arrival.
    Random(f64, f64),
}

/// A patrol route and where along it the walker is.
#[derive(Debug, Clone)]
pub struct Route {
    points: Vec<V2>,
    dwell: Vec<Dwell>,
    looped: bool,
    /// Each point counts as reached within its own radius (m).
    arrival: Vec<f64>,
    target: usize,
    dwell_until: Option<f64>,
    done: bool,
    final_yaw: Option<f64>,
}

impl Route {
    /// A route over `points` (the walker starts at the first; empty = it stands), with one dwell
    /// per point.
    pub fn new(points: Vec<V2>, dwell: Vec<Dwell>, looped: bool, arrival_radius: f64) -> Self {
        let arrival = vec![arrival_radius; points.len()];
        Route::with_radii(points, dwell, looped, arrival)
    }

    /// A route whose points are each reached within their own radius (`arrival[k]`, m): a
    /// planned path's corners within the waypoint radius, its goals within the arrival radius.
    pub fn with_radii(points: Vec<V2>, dwell: Vec<Dwell>, looped: bool, arrival: Vec<f64>) -> Self {
        let mut r = Route {
            points,
            dwell,
            looped,
            arrival,
            target: 0,
            dwell_until: None,
            done: false,
            final_yaw: None,
        };
        r.reset();
        r
    }

    /// Back to the start: heading for the second point, no dwell pending.
    pub fn reset(&mut self) {
        self.target = 1;
        self.dwell_until = None;
        self.done = self.points.len() < 2;
    }

    /// The index of the waypoint being walked to (`None` once a non-looping route is finished or
    /// for a walker that stands).
    pub fn target(&self) -> Option<usize> {
        (!self.done).then_some(self.target)
    }

    /// Face `yaw` (rad) once the route is finished (a goal pose's orientation).
    pub fn with_final_yaw(mut self, yaw: Option<f64>) -> Self {
        self.final_yaw = yaw;
        self
    }

    /// The yaw to face once finished.
    pub fn final_yaw(&self) -> Option<f64> {
        self.final_yaw
    }

    /// Give up on the point being walked to: on to the next (a patrol), or finished.
    pub fn skip(&mut self) {
        if !self.done {
            self.dwell_until = None;
            self.advance();
        }
    }

    /// The route's points.
    pub fn points(&self) -> &[V2] {
        &self.points
    }

    /// True while standing out a dwell.
    pub fn dwelling(&self) -> bool {
        self.dwell_until.is_some()
    }

    fn advance(&mut self) {
        self.target += 1;
        if self.target >= self.points.len() {
            if self.looped {
                self.target = 0;
            } else {
                self.done = true;
            }
        }
    }

    /// The velocity the walker would like at `pos` and sim time `now` at `speed` (m/s): toward the
    /// target, or zero while dwelling or done. `draw(lo, hi)` draws a random dwell (the caller's
    /// seeded generator); its error ends the step.
    pub fn preferred(
        &mut self,
        pos: V2,
        now: f64,
        speed: f64,
        mut draw: impl FnMut(f64, f64) -> Result<f64, String>,
    ) -> Result<V2, String> {
        if self.done {
            return Ok([0.0, 0.0]);
        }
        if let Some(until) = self.dwell_until {
            if now < until {
                return Ok([0.0, 0.0]);
            }
            self.dwell_until = None;
            self.advance();
            if self.done {
                return Ok([0.0, 0.0]);
            }
        }
        // A zero dwell heads straight on to the next point (at most once round the route).
        for _ in 0..=self.points.len() {
            let goal = self.points[self.target];
            let to = [goal[0] - pos[0], goal[1] - pos[1]];
            let d = norm(to);
            if d > self.arrival[self.target] {
                return Ok([to[0] / d * speed, to[1] / d * speed]);
            }
            let secs = match self.dwell[self.target] {
                Dwell::Fixed(s) => s,
                Dwell::Random(lo, hi) => draw(lo, hi)?,
            };
            if secs > 0.0 {
                self.dwell_until = Some(now + secs);
                return Ok([0.0, 0.0]);
            }
            self.advance();
            if self.done {
                break;
            }
        }
        Ok([0.0, 0.0])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn walks_dwells_and_loops() {
        let mut r = Route::new(
            vec![[0.0, 0.0], [2.0, 0.0]],
            vec![Dwell::Fixed(0.0), Dwell::Fixed(1.5)],
            true,
            0.25,
        );
        let none = |_: f64, _: f64| -> Result<f64, String> { unreachable!() };
        assert_eq!(r.preferred([0.0, 0.0], 0.0, 1.0, none).unwrap(), [1.0, 0.0]);
        // arrived at [2, 0]: dwell 1.5 s
        assert_eq!(r.preferred([1.8, 0.0], 2.0, 1.0, none).unwrap(), [0.0, 0.0]);
        assert!(r.dwelling());
        assert_eq!(r.preferred([1.8, 0.0], 3.49, 1.0, none).unwrap(), [0.0, 0.0]);
        // dwell over: back toward the first point (looped)
        assert_eq!(r.preferred([1.8, 0.0], 3.5, 1.0, none).unwrap(), [-1.0, 0.0]);
        assert_eq!(r.target(), Some(0));
    }
}

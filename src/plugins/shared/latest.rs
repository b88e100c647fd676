//! The in-process readers a sensor or an observer puts on the blackboard, shared between the
//! plugin and any number of readers on the physics thread (clones share the value):
//! [`Latest`], a sensor's latest reading (set each time it measures, cleared on reset), and
//! [`Reader`], a value the plugin keeps current from the start (an observer's report).

use std::cell::RefCell;
use std::rc::Rc;

/// The latest reading of one sensor (a cheap handle; clones share the value).
#[derive(Debug)]
pub struct Latest<T>(Rc<RefCell<Option<T>>>);

impl<T> Default for Latest<T> {
    fn default() -> Self {
        Latest(Rc::new(RefCell::new(None)))
    }
}

impl<T> Clone for Latest<T> {
    fn clone(&self) -> Self {
        Latest(self.0.clone())
    }
}

impl<T: Clone> Latest<T> {
    /// The latest reading (a copy), if one was taken since the last reset.
    pub fn latest(&self) -> Option<T> {
        self.0.borrow().clone()
    }
}

impl<T> Latest<T> {
    /// Run `f` on the latest reading without copying it.
    pub fn with<R>(&self, f: impl FnOnce(Option<&T>) -> R) -> R {
        f(self.0.borrow().as_ref())
    }
    /// Store a new reading (the sensor, after it measured).
    pub fn set(&self, v: T) {
        *self.0.borrow_mut() = Some(v);
    }
    /// Forget the reading (the sensor, on reset).
    pub fn clear(&self) {
        *self.0.borrow_mut() = None;
    }
}

/// A value one plugin keeps current (an observer's report, a pose refreshed every step) and any
/// number of readers copy out (a cheap handle; clones share the value).
#[derive(Debug, Default)]
pub struct Reader<T>(Rc<RefCell<T>>);

impl<T> Clone for Reader<T> {
    fn clone(&self) -> Self {
        Reader(self.0.clone())
    }
}

/// A reader of the value the plugin holds in `cell`.
impl<T> From<Rc<RefCell<T>>> for Reader<T> {
    fn from(cell: Rc<RefCell<T>>) -> Self {
        Reader(cell)
    }
}

impl<T: Clone> Reader<T> {
    /// The current value (a copy).
    pub fn get(&self) -> T {
        self.0.borrow().clone()
    }
}

impl<T> Reader<T> {
    /// Replace the value (the plugin).
    pub fn set(&self, v: T) {
        *self.0.borrow_mut() = v;
    }
}

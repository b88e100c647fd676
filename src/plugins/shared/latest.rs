//! The in-process reader a sensor puts on the blackboard: the latest reading, shared between the
//! sensor (which sets it each time it measures and clears it on reset) and any number of readers
//! on the physics thread.

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

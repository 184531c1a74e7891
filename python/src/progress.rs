//! Progress callbacks from Python: `progress(step, done, total)`, called
//! with the GIL taken from inside work that runs without it (training,
//! evaluation, capture). Holds no logic of the work itself.

use pyo3::prelude::*;

/// A Python progress callback, called as `progress(step, done, total)`
/// for each step of the work (the GIL taken for each call). The first
/// exception it raises is kept and raised when the work ends.
pub struct Progress {
    callback: Option<PyObject>,
    done: u64,
    total: u64,
    error: Option<PyErr>,
}

impl Progress {
    /// A callback (or none) for work of `total` steps.
    pub fn new(callback: Option<PyObject>, total: u64) -> Progress {
        Progress {
            callback,
            done: 0,
            total,
            error: None,
        }
    }

    /// A step named `step` begins.
    pub fn step(&mut self, step: &str) {
        self.done += 1;
        let Some(cb) = &self.callback else {
            return;
        };
        if self.error.is_some() {
            return;
        }
        let (done, total) = (self.done.min(self.total), self.total);
        if let Err(e) = Python::with_gil(|py| cb.call1(py, (step, done, total)).map(drop)) {
            self.error = Some(e);
        }
    }

    /// The callback's exception, if it raised one.
    pub fn finish(self) -> PyResult<()> {
        self.error.map_or(Ok(()), Err)
    }
}

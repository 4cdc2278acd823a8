//! A one-line spinner with the current state on stderr, drawn only when stderr is a terminal
//! (`std::io::IsTerminal`), so that logs and pipes never see control characters. Anything
//! printed to stdout goes through [`Spinner::print`], which clears the line first.

use std::io::{IsTerminal, Write};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::task::JoinHandle;

const FRAMES: &[&str] = &["⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"];

#[derive(Debug, Default)]
struct Line {
    text: String,
    drawn: bool,
}

/// The spinner; inert when stderr is not a terminal.
#[derive(Debug)]
pub struct Spinner {
    line: Option<Arc<Mutex<Line>>>,
    task: Option<JoinHandle<()>>,
}

fn clear(line: &mut Line) {
    if line.drawn {
        let mut err = std::io::stderr().lock();
        let _ = write!(err, "\r\x1b[K");
        let _ = err.flush();
        line.drawn = false;
    }
}

impl Spinner {
    /// Starts the spinner when stderr is a terminal.
    pub fn start() -> Self {
        if !std::io::stderr().is_terminal() {
            return Self {
                line: None,
                task: None,
            };
        }
        let line = Arc::new(Mutex::new(Line::default()));
        let shared = Arc::clone(&line);
        let task = tokio::spawn(async move {
            let mut frame = 0usize;
            loop {
                tokio::time::sleep(Duration::from_millis(120)).await;
                if let Ok(mut l) = shared.lock()
                    && !l.text.is_empty()
                {
                    let mut err = std::io::stderr().lock();
                    let _ = write!(err, "\r{} {}\x1b[K", FRAMES[frame % FRAMES.len()], l.text);
                    let _ = err.flush();
                    l.drawn = true;
                }
                frame += 1;
            }
        });
        Self {
            line: Some(line),
            task: Some(task),
        }
    }

    /// Sets the state shown.
    pub fn set(&self, text: String) {
        if let Some(line) = &self.line
            && let Ok(mut l) = line.lock()
        {
            l.text = text;
        }
    }

    /// Prints to stdout with the spinner line cleared.
    pub fn print(&self, text: &str) {
        let guard = self.line.as_ref().and_then(|l| l.lock().ok());
        let mut guard = guard;
        if let Some(l) = guard.as_deref_mut() {
            clear(l);
        }
        let mut out = std::io::stdout().lock();
        let _ = out.write_all(text.as_bytes());
        let _ = out.flush();
    }

    /// Stops and erases the spinner.
    pub fn stop(mut self) {
        self.halt();
    }

    fn halt(&mut self) {
        if let Some(task) = self.task.take() {
            task.abort();
        }
        if let Some(line) = self.line.take()
            && let Ok(mut l) = line.lock()
        {
            clear(&mut l);
        }
    }
}

impl Drop for Spinner {
    fn drop(&mut self) {
        self.halt();
    }
}

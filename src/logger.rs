//! A small `log` backend: stderr, off unless VKCL_LOG asks, filtered per target
//! (`VKCL_LOG=warn,api=trace`). It never panics.

use log::{Level, LevelFilter, Log, Metadata, Record};
use std::io::Write;
use std::sync::Once;

struct Logger {
    default: LevelFilter,
    targets: Vec<(String, LevelFilter)>,
}

fn level(s: &str) -> Option<LevelFilter> {
    s.trim().parse().ok()
}

impl Logger {
    fn from_spec(spec: &str) -> Logger {
        let mut l = Logger {
            default: LevelFilter::Off,
            targets: vec![],
        };
        for part in spec.split(',').filter(|p| !p.trim().is_empty()) {
            match part.split_once('=') {
                Some((t, lv)) => l
                    .targets
                    .push((t.trim().to_string(), level(lv).unwrap_or(LevelFilter::Off))),
                None => l.default = level(part).unwrap_or(LevelFilter::Off),
            }
        }
        l
    }

    fn max(&self) -> LevelFilter {
        self.targets
            .iter()
            .map(|t| t.1)
            .chain([self.default])
            .max()
            .unwrap_or(LevelFilter::Off)
    }

    fn filter(&self, target: &str) -> LevelFilter {
        self.targets
            .iter()
            .find(|t| t.0 == target)
            .map_or(self.default, |t| t.1)
    }
}

impl Log for Logger {
    fn enabled(&self, m: &Metadata<'_>) -> bool {
        m.level() <= self.filter(m.target())
    }

    fn log(&self, r: &Record<'_>) {
        if self.enabled(r.metadata()) {
            let tag = match r.level() {
                Level::Error => "error",
                Level::Warn => "warn",
                Level::Info => "info",
                Level::Debug => "debug",
                Level::Trace => "trace",
            };
            let _ = writeln!(
                std::io::stderr(),
                "vkcl {tag} [{}] {}",
                r.target(),
                r.args()
            );
        }
    }

    fn flush(&self) {}
}

/// Installs the logger once, if the application has not installed one of its own.
pub fn init() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        let logger = Logger::from_spec(&crate::config::get().log);
        let max = logger.max();
        if max != LevelFilter::Off && log::set_boxed_logger(Box::new(logger)).is_ok() {
            log::set_max_level(max);
        }
    });
}

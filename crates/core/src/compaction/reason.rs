//! Why a compaction runs (`manual`, `threshold`, `overflow`): named by the
//! caller's options, carried by every event, and the prefix of every error
//! message, as pi 0.73 words them.

/// Why a compaction runs; it prefixes error messages as pi 0.73 does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Reason {
    Manual,
    Threshold,
    Overflow,
}

impl Reason {
    /// The reason named `name` (`None` for an unknown name).
    pub fn from_name(name: &str) -> Option<Reason> {
        match name {
            "manual" => Some(Reason::Manual),
            "threshold" => Some(Reason::Threshold),
            "overflow" => Some(Reason::Overflow),
            _ => None,
        }
    }

    /// `options.reason`: absent (`None`) is `manual`; a name is its reason;
    /// anything else (`Some(None)`: not a string) is `Err` with what was
    /// expected.
    pub fn from_option(given: Option<Option<&str>>) -> Result<Reason, &'static str> {
        match given {
            None => Ok(Reason::Manual),
            Some(name) => name
                .and_then(Reason::from_name)
                .ok_or("\"manual\", \"threshold\" or \"overflow\""),
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Reason::Manual => "manual",
            Reason::Threshold => "threshold",
            Reason::Overflow => "overflow",
        }
    }

    pub fn error_prefix(self) -> &'static str {
        match self {
            Reason::Manual => "Compaction failed: ",
            Reason::Threshold => "Auto-compaction failed: ",
            Reason::Overflow => "Context overflow recovery failed: ",
        }
    }
}

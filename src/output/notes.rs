//! What a run knows beyond its packet ([`Notes`]): shown by `--detail` and as warnings,
//! never printed in JSON.

/// Facts about a run that the packet does not carry (it must stay byte-compatible) but a
/// person reading `--detail` needs, e.g. where the embedded store is. Never printed in
/// JSON. A command fills the fields it knows; [`super::detail_report`] shows those that
/// are set.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Notes {
    /// The registry file the goal/agent route was read from.
    pub registry: Option<std::path::PathBuf>,
    /// Where the provider keeps records: the embedded store's file, or the `ov` command.
    pub store: Option<String>,
    /// The utility ledger a command read or wrote, without credentials
    /// ([`crate::ledger::Location::public_display`]).
    pub ledger: Option<String>,
    /// Why the command failed open on something of the user's (a recall session that
    /// could not be stored, an embedded store it would not trust), naming the path and
    /// the fix. Printed on stderr as `reward-memory: warning: ...`, whatever the format;
    /// the packet carries only public-safe codes.
    pub warnings: Vec<String>,
    /// What the command did beside printing its packet (e.g. the verdict it recorded),
    /// printed on stderr as `reward-memory: ...` whatever the format.
    pub notices: Vec<String>,
}

//! TODO(issue 3): memory providers (embedded SQLite store, OpenViking).

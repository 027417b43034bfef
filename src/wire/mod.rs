//! The Python-compatible wire layer: the bottom of the crate, depending on nothing above it.
//!
//! Everything that decides how a packet looks byte for byte lives here: the ordered JSON
//! value with its `json.loads`-compatible parser and `json.dumps`-compatible printers
//! ([`json`]), Python's float `repr`, `str()` and `round()` ([`pyfmt`]), ISO timestamps as
//! `datetime.fromisoformat` reads them ([`timestamp`]), every hashed identifier with the
//! exact bytes it hashes ([`digest`]), the field-level text guards shared by all
//! contracts ([`text`]), the stricter credential rule of this port's own packets
//! ([`credential`]), and how error messages show key lists and long text ([`keys`]).
//! Contract modules build on these; nothing here knows a contract.

pub mod credential;
pub mod digest;
pub mod json;
pub mod keys;
pub mod pyfmt;
pub mod text;
pub mod timestamp;

//! The Python-compatible wire layer: the bottom of the crate, depending on nothing above it.
//!
//! Everything that decides how a packet looks byte for byte lives here: the ordered JSON
//! value with its `json.loads`-compatible parser and `json.dumps`-compatible printers
//! ([`json`]), Python's float `repr` and `round()` ([`float`]), `str()` and `repr()` of
//! values and Python's whitespace rules ([`pyfmt`]), integers in decimal ([`decimal`]), ISO timestamps as
//! `datetime.fromisoformat` reads them ([`timestamp`]), every hashed identifier with the
//! exact bytes it hashes ([`digest`]), the field-level text guards shared by all
//! contracts ([`text`]), the stricter credential rule of this port's own packets
//! ([`credential`]), how error messages show key lists and long text ([`keys`]), the
//! closed sets of names that domain enums are spelled with ([`choice`]), the JSON
//! Schema vocabulary of typed packets ([`schema`]), and the hasher of working maps
//! whose order never shows ([`fast_hash`]).
//! Contract modules build on these; nothing here knows a contract.
//!
//! Inside the layer the arrows point one way: [`float`], [`decimal`], [`keys`],
//! [`fast_hash`] and [`schema`] depend on nothing, [`json`] prints floats with [`float`] and integers with
//! [`decimal`], [`pyfmt`] reads [`json`] values, and
//! the digests, text guards, credential rule and timestamps build on those.

pub mod choice;
pub mod credential;
pub mod decimal;
pub mod digest;
pub mod fast_hash;
pub mod float;
pub mod json;
pub mod keys;
pub mod pyfmt;
pub mod schema;
pub mod text;
pub mod timestamp;

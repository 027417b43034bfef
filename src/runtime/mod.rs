//! The runtime root's private documents: the recall sessions that `apply` reads back
//! ([`sessions`]) and the application receipts, pending attributions and evaluator
//! quotas that `utility-attribute` settles ([`receipts`]).
//!
//! Shell code, beside [`crate::io`]: the documents' rules are the recall seam's and the
//! attribution runtime's; these modules do the file work around them through `io`'s
//! private-file and trust primitives.

pub mod receipts;
pub mod sessions;

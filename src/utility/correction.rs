//! An admitted owner correction: the `owner_correction` observation that
//! `utility-correct` appends and the checkpoint refs its provenance and receipt carry.
//! The admission (the operator authority, the input's checks) is
//! [`crate::contract::correction`]'s.

use crate::utility::observation::Observation;

/// `evaluation_version` of a correction observation.
pub const CORRECTION_VERSION: &str = "memory_utility_correction_v0";

/// An admitted correction: the observation to append and the checkpoint it rests on.
#[derive(Debug, Clone, PartialEq)]
pub struct Correction {
    pub observation: Observation,
    /// The checkpoint's `source_ref`: the provenance ref of the delivery.
    pub checkpoint_ref: String,
    pub operator_ref: String,
    pub authority_ref: String,
    pub corpus_id: String,
}

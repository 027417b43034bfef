//! Differential laws of [`super::scan`]: reading an input straight from its text agrees
//! with parsing it and taking the general path, whenever the direct reading answers.

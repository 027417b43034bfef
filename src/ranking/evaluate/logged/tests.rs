//! Tests of the evaluation on logged traffic: the time split, the estimators on a world
//! with a known answer, the export round trip.

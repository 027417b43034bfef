//! JSON Schemas of the packets, generated with schemars and committed under `schemas/`.

//! TODO(issue 3): the Stage-3 recall/application seam.

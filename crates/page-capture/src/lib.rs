//! Captures resident anonymous memory pages of live processes into snapshot corpora.

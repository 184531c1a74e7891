//! Writes trained tables as C headers for the kernel iaa_crypto driver, QPL and ISA-L.

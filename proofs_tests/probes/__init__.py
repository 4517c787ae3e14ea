"""Probes of other libraries: what an installed library computes, asked through its own components."""

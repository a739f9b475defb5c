"""The temporal benchmark: baseline (from scratch), SST and LCT on a temporal corpus."""

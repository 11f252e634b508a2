"""Membership-inference (tracing) attacks on released estimates: the score attack of Cai, Wang & Zhang."""

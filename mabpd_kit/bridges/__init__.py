"""Bridges between methods: the only modules that know two methods' formats.

- :mod:`~mabpd_kit.bridges.sad_identity`: MABPD's Structured Argument Debate transcripts as
  identity-bias debate logs, so the identity measures ask whether SAD itself is sycophantic.

Neither method imports the other; a bridge imports both.
"""

from __future__ import annotations

from mabpd_kit.bridges.sad_identity import debate_log, sad_debate_logs, sad_identity_report

__all__ = ["debate_log", "sad_debate_logs", "sad_identity_report"]

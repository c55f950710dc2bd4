"""Bridges between methods: the only modules that know two methods' formats (neither method imports the other)."""

from __future__ import annotations

from mabpd_kit.bridges.sad_identity import debate_log, sad_debate_logs, sad_identity_report

__all__ = ["debate_log", "sad_debate_logs", "sad_identity_report"]

"""Identity bias in multi-agent debate (SPEC 4): who said it, not what was said.

Several agents answer the same question on their own (round 0), then for ``T`` rounds each one
reads its own previous answer and its peers' and answers again. If an agent gives a peer's
answer more weight *because it is a peer's* (sycophancy), or its own *because it is its own*
(self-bias), the debate is swayed by identity rather than content. This package measures that.

The pieces, in the order a lab uses them (one module each):

1. :mod:`~mabpd_kit.identity.questions` -- :func:`load_questions` (MMLU professional medicine
   letters, GSM8K numbers) and :func:`parse_answer`, which reads ``(B)``, ``Answer: b``, ``**C**``,
   ``the answer is 42``, ``$1,234.50``, ``#### 18``; a reply it cannot read is kept as *unparsed*.

   **Fault or answer** (:func:`~mabpd_kit.identity.questions.reply_fault`, issue 21.3). A reply that
   names an option (or, for GSM8K, a number) is an answer, however it is worded: prose, bold, a
   stray undecodable byte, even cut at ``max_tokens`` once the option is out. A reply that names
   none is an *endpoint fault* when it is empty, refused (``message.refusal`` or a content filter),
   cut at ``max_tokens`` (``finish_reason == "length"``) or garbled (undecodable bytes, control
   characters, not one letter or digit), and so is an unreadable body; only a complete, readable
   reply that names no option is the model's own *unparsed* answer (an abstention), kept as data and
   cached. A fault is a failed call, never an answer: it is never cached, it is sent again within
   ``config.llm.max_retries``, and if it persists the call fails with the fault as its reason, the
   question fails with it, and a rerun debates the question again (a healthy server recomputes it).
2. :mod:`~mabpd_kit.identity.debate` -- :func:`build_messages`: the *vanilla* prompt labels the
   agent's own answer and its peers'; the *anonymised* prompt lists every answer, its own
   included, with no label, in a seeded random order. :func:`run_debate` debates every
   (condition, question) through the one batch runner (checkpoint, resume, failed-with-reason,
   usage); ``results.to_frame()`` is the log. Offline the belief simulator plays the agents, and
   every row says so (``source == "simulator"``).
3. :mod:`~mabpd_kit.identity.logs` -- the log format (one row per condition, question, agent,
   round), :func:`read_logs` / :func:`write_logs`.
4. :mod:`~mabpd_kit.identity.measures` -- defined once, on the logs, so the same code measures
   LLM runs, simulated runs and MABPD's SAD debates (:mod:`mabpd_kit.bridges`):

   * a *disagreement pair* is (agent i, peer j, round t) with ``y[i,t-1] != y[j,t-1]``;
   * Conformity = mean over pairs of ``[y[i,t] == y[j,t-1]]``;
     Obstinacy = mean over pairs of ``[y[i,t] == y[i,t-1]]``; Delta = Conformity - Obstinacy;
   * IBC = Delta(vanilla) - Delta(anonymised): positive means peers are over-weighted;
   * subversion (correct -> incorrect after seeing a wrong peer) and correction
     (incorrect -> correct after seeing a right peer); majority-vote accuracy per round;
   * confidence intervals resample whole questions (:func:`mabpd_kit.metrics.bootstrap_ci`);
   * an unparsed current answer is neither conforming nor obstinate (``identity.unparsed =
     "neither"``, SPEC 4) or its pairs are dropped (``"drop"``); every summary counts them.

5. :mod:`~mabpd_kit.identity.simulator` -- :func:`simulate`: each agent holds Dirichlet counts
   over the options; every visible answer adds a one-hot count weighted ``w_self`` (its own) or
   ``w_peer`` (a peer's); the agent answers by drawing from its predictive distribution. Plant
   ``w_peer > w_self`` and the measured IBC comes out positive; :func:`recovered_gap` turns it
   back into the planted weight gap.

>>> logs = simulate(BeliefSpec(w_self=1.0, w_peer=1.5), n_questions=300, seed=0)
>>> round(ibc(logs, ci=False).estimate, 2) > 0
True
"""

from __future__ import annotations

from mabpd_kit.identity.debate import DebateResults, build_messages, call_seed, debate_question, run_debate
from mabpd_kit.identity.logs import (
    CONDITIONS,
    LOG_COLUMNS,
    Condition,
    DebateRecord,
    LogRow,
    log_frame,
    read_logs,
    write_logs,
)
from mabpd_kit.identity.measures import (
    PAPER_CORRECTION_CUT,
    PAPER_SUBVERSION_CUT,
    PAPER_TABLE,
    IBCResult,
    IdentityReport,
    disagreement_pairs,
    ibc,
    identity_report,
    identity_summary,
    majority_accuracy,
    paper_table,
    trust_cut,
    trust_rates,
)
from mabpd_kit.identity.questions import (
    Parsed,
    Question,
    is_correct,
    load_questions,
    normalise_number,
    parse_answer,
    parse_choice,
    parse_number,
    questions_from_frame,
)
from mabpd_kit.identity.simulator import BeliefSpec, recovered_gap, recovery_sweep, simulate, simulate_questions

__all__ = [
    "CONDITIONS",
    "LOG_COLUMNS",
    "PAPER_CORRECTION_CUT",
    "PAPER_SUBVERSION_CUT",
    "PAPER_TABLE",
    "BeliefSpec",
    "Condition",
    "DebateRecord",
    "DebateResults",
    "IBCResult",
    "IdentityReport",
    "LogRow",
    "Parsed",
    "Question",
    "build_messages",
    "call_seed",
    "debate_question",
    "disagreement_pairs",
    "ibc",
    "identity_report",
    "identity_summary",
    "is_correct",
    "load_questions",
    "log_frame",
    "majority_accuracy",
    "normalise_number",
    "paper_table",
    "parse_answer",
    "parse_choice",
    "parse_number",
    "questions_from_frame",
    "read_logs",
    "recovered_gap",
    "recovery_sweep",
    "run_debate",
    "simulate",
    "simulate_questions",
    "trust_cut",
    "trust_rates",
    "write_logs",
]

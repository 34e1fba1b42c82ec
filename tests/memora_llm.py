"""A scripted LLM for Memora's agent: deterministic answers read from the prompt text.

Memora's agent (``memora.Memora``, memora-core 0.3.1) asks its models five things: extract
memories from an interaction, extract only new ones on an update, compare candidates with
the stored memories they resemble, write memory search queries for a message, and filter
retrieved memories. :class:`ScriptedLLM` answers each from what Memora put in the prompt
(the message blocks, the previously extracted memories, the existing and candidate
memories, the latest message), following a script of :class:`Fact`\\ s and
:class:`Topic`\\ s, so a test knows exactly what the agent will store and recall.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from memora.llm_backends.base import BaseBackendLLM
from memora.prompts import MSG_MEMORY_SEARCH_PROMPT
from memora.schema.extraction_schema import (
    ContraryMemory,
    ExtractedMemory,
    MemoryComparisonResponse,
    MemoryExtractionResponse,
    NewGleanedMemory,
)
from pydantic import BaseModel

#: Memora's markers for the user and the agent in extracted memories.
USER_MARK = "#user_#id#"
AGENT_MARK = "#agent_#id#"

_NAMES = re.compile(r"Given an interaction between \((.*?)\) and \((.*?)\)\.")
_BLOCK = re.compile(r"# MESSAGE BLOCK ID: (\d+)\n-------------\n(.*)\n", re.DOTALL)
_PREVIOUS = re.compile(
    r"# PREVIOUSLY ALREADY EXTRACTED MEMORIES:\n(.*?)\n\n>>>>>>> ENTIRE", re.DOTALL
)
_LATEST_MESSAGE = re.compile(r"# Latest Message For Retrieval Decision \(.*?\)\n---\n(.*)\n---")
_FILTER_MESSAGE = re.compile(r"Latest Message to Room: \n(.*?)\n\nThese are", re.DOTALL)
# An existing memory as ``str()`` of the graph's Memory model shows it.
_EXISTING = re.compile(r"memory_id='([^']+)', memory=('(?:[^'\\]|\\.)*'|\"(?:[^\"\\]|\\.)*\")")
_WORD = re.compile(r"\w+")


@dataclass(frozen=True)
class Topic:
    """What a message can ask about: its ``keywords`` make the search model write ``query``."""

    name: str
    keywords: tuple[str, ...]
    query: str


@dataclass(frozen=True)
class Fact:
    """A memory the extraction model finds when every trigger occurs in some message.

    ``memory`` uses Memora's ``#user_#id#``/``#agent_#id#`` markers; the messages holding
    the triggers are its sources. Two facts of one topic contradict each other.
    """

    topic: str
    memory: str
    triggers: tuple[str, ...]

    def resolved(self, user_name: str, agent_label: str) -> str:
        """The text a graph read returns for it (markers replaced by the names)."""
        return self.memory.replace(USER_MARK, user_name).replace(AGENT_MARK, agent_label)

    def matches(self, text: str) -> bool:
        """Whether ``text`` is this memory, with placeholders or with names in the markers."""
        parts = re.split(f"({re.escape(USER_MARK)}|{re.escape(AGENT_MARK)})", self.memory)
        pattern = "".join(
            r"\S+?" if part in (USER_MARK, AGENT_MARK) else re.escape(part) for part in parts
        )
        return re.fullmatch(pattern, text) is not None


@dataclass
class Call:
    """One call to the model: which of Memora's prompts it was and what it answered."""

    kind: str
    answer: str | BaseModel


@dataclass
class ScriptedLLM(BaseBackendLLM):
    """A ``BaseBackendLLM`` that follows the script instead of a model."""

    facts: Sequence[Fact]
    topics: Sequence[Topic]
    calls: list[Call] = field(default_factory=list)

    @property
    def get_model_kwargs(self) -> dict[str, Any]:
        return {"model": "scripted", "temperature": 0}

    async def close(self) -> None:
        """Nothing to release."""

    async def __call__(
        self,
        messages: list[dict[str, str]],
        output_schema_model: type[BaseModel] | None = None,
    ) -> str | BaseModel:
        system = messages[0]["content"]
        answer: str | BaseModel
        if output_schema_model is MemoryExtractionResponse:
            kind = "extraction_update" if _PREVIOUS.search(system) else "extraction"
            answer = self._extract(system, messages[1:])
        elif output_schema_model is MemoryComparisonResponse:
            kind, answer = "comparison", self._compare(messages[1]["content"])
        elif system == MSG_MEMORY_SEARCH_PROMPT:
            kind, answer = "search_queries", self._queries(messages[1]["content"])
        elif _FILTER_MESSAGE.search(system):
            kind, answer = "filter", self._filter(system, messages[1]["content"])
        else:
            raise AssertionError(f"a prompt Memora 0.3.1 does not send: {system[:200]!r}")
        self.calls.append(Call(kind, answer))
        return answer

    def kinds(self) -> list[str]:
        return [call.kind for call in self.calls]

    def fact_of(self, text: str) -> Fact | None:
        return next((fact for fact in self.facts if fact.matches(text)), None)

    def _topics_of(self, message: str) -> list[Topic]:
        words = set(_WORD.findall(message.casefold()))
        return [topic for topic in self.topics if words.intersection(topic.keywords)]

    def _extract(self, system: str, blocks: list[dict[str, str]]) -> MemoryExtractionResponse:
        """The last-mentioned fact of each topic, less what was already extracted."""
        names = _NAMES.search(system)
        assert names is not None, "the extraction prompt names the agent and the user"
        agent_label, user_name = names.groups()
        contents: list[str] = []
        for position, block in enumerate(blocks):
            parsed = _BLOCK.fullmatch(block["content"].lstrip("\n"))
            assert parsed is not None and int(parsed.group(1)) == position, block
            contents.append(parsed.group(2))
        previous = _PREVIOUS.search(system)
        already = (
            {memory["memory"] for memory in ast.literal_eval(previous.group(1))}
            if previous
            else set()
        )
        latest: dict[str, tuple[int, Fact, list[int]]] = {}
        for fact in self.facts:
            sources = [
                next((i for i, text in enumerate(contents) if trigger in text), None)
                for trigger in fact.triggers
            ]
            if None in sources:
                continue
            found = sorted({i for i in sources if i is not None})
            if fact.topic not in latest or found[-1] >= latest[fact.topic][0]:
                latest[fact.topic] = (found[-1], fact, found)
        extracted = [
            ExtractedMemory(memory=fact.memory, msg_source_ids=sources)
            for _, fact, sources in sorted(latest.values(), key=lambda item: item[0])
            if fact.resolved(user_name, agent_label) not in already
        ]
        # Like a model that found the last one on its second pass.
        return MemoryExtractionResponse(
            memories_first_pass=extracted[:-1], memories_second_pass=extracted[-1:]
        )

    def _compare(self, content: str) -> MemoryComparisonResponse:
        """Same fact as a stored memory: dropped; same topic: contrary; else new."""
        existing_part, candidate_part = content.split("NEW CANDIDATE MEMORIES", 1)
        existing = [
            (memory_id, self.fact_of(ast.literal_eval(text)))
            for memory_id, text in _EXISTING.findall(existing_part)
        ]
        candidates = ast.literal_eval(candidate_part.split("====", 1)[1].strip())
        new: list[NewGleanedMemory] = []
        contrary: list[ContraryMemory] = []
        for candidate in candidates:
            fact = self.fact_of(candidate["memory"])
            if fact is not None and any(known == fact for _, known in existing):
                continue
            same_topic = [
                memory_id
                for memory_id, known in existing
                if fact is not None and known is not None and known.topic == fact.topic
            ]
            if same_topic:
                contrary.append(
                    ContraryMemory(
                        memory=candidate["memory"],
                        source_candidate_pos_id=candidate["POS_ID"],
                        contradicted_memory_id=same_topic[0],
                    )
                )
            else:
                new.append(
                    NewGleanedMemory(
                        memory=candidate["memory"], source_candidate_pos_id=candidate["POS_ID"]
                    )
                )
        return MemoryComparisonResponse(new_memories=new, contrary_memories=contrary)

    def _queries(self, content: str) -> str:
        """One query per topic the message asks about; none when it asks about none."""
        message = _LATEST_MESSAGE.search(content)
        assert message is not None, content
        queries = [topic.query for topic in self._topics_of(message.group(1))]
        return "&& MEMORY_SEARCH &&\n" + "".join(f"    << {query} >>\n" for query in queries)

    def _filter(self, system: str, content: str) -> str:
        """Keep the retrieved memories of the topics the latest message asks about."""
        message = _FILTER_MESSAGE.search(system)
        assert message is not None
        wanted = {topic.name for topic in self._topics_of(message.group(1))}
        lines = []
        for memory in ast.literal_eval(content):
            fact = self.fact_of(memory["memory"])
            if fact is not None and fact.topic in wanted:
                lines.append(f"- Reason: about {fact.topic} || << {memory['memory_id']} >>")
        return "\n".join(lines) or "- Reason: nothing relevant || << NONE >>"

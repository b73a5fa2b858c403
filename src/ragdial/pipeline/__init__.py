"""The dialog system: a turn takes a branch (the task dialog, or understand → retrieve → generate), built from a
plain-data (YAML) config.

```python
from ragdial.pipeline import DialogSystem, load_config

system = DialogSystem.from_config(load_config("system.yaml"), language="zh")
session = system.new_session(user=system.users[0].id)
reply = system.respond(session, "我这个月流量还剩多少？")
session.add(reply.record)  # the pipeline never changes a session: the caller keeps the turn
reply.text, reply.knowledge, reply.decision, reply.timings
```
"""

from ragdial.components import BuildContext, Component, ConfigError, Registry
from ragdial.pipeline.branch import Branch, KnowledgeBranch, TaskDialogBranch, TurnInput
from ragdial.pipeline.components import DETECTORS, GENERATORS, KNOWLEDGE, RETRIEVERS, build_system, build_systems
from ragdial.pipeline.config import ComponentSpec, SystemConfig, load_config
from ragdial.pipeline.knowledge import KnowledgeSource, UserProfile
from ragdial.pipeline.system import DialogSystem
from ragdial.pipeline.turn import Citation, Event, Piece, Prepared, Reply, Session, TurnRecord, last_reply
from ragdial.understanding.decision import GLOBAL, USER_PROFILE, AlwaysRetrieve, Decision, Detector

__all__ = [
    "DETECTORS",
    "GENERATORS",
    "GLOBAL",
    "KNOWLEDGE",
    "RETRIEVERS",
    "USER_PROFILE",
    "AlwaysRetrieve",
    "Branch",
    "BuildContext",
    "Citation",
    "Component",
    "ComponentSpec",
    "ConfigError",
    "Decision",
    "Detector",
    "DialogSystem",
    "Event",
    "KnowledgeBranch",
    "KnowledgeSource",
    "Piece",
    "Prepared",
    "Registry",
    "Reply",
    "Session",
    "SystemConfig",
    "TaskDialogBranch",
    "TurnInput",
    "TurnRecord",
    "UserProfile",
    "build_system",
    "build_systems",
    "last_reply",
    "load_config",
]

"""The dialog system: understand → retrieve → generate, built from a plain-data (YAML) config.

```python
from ragdial.pipeline import DialogSystem, load_config

system = DialogSystem.from_config(load_config("system.yaml"), language="zh")
session = system.new_session(user=system.users[0].id)
reply = system.respond(session, "我这个月流量还剩多少？")
reply.text, reply.knowledge, reply.decision, reply.timings
```
"""

from ragdial.pipeline.components import DETECTORS, GENERATORS, KNOWLEDGE, RETRIEVERS, BuildContext, build_systems
from ragdial.pipeline.config import ComponentSpec, SystemConfig, load_config
from ragdial.pipeline.decision import GLOBAL, USER_PROFILE, AlwaysRetrieve, Decision, Detector
from ragdial.pipeline.knowledge import KnowledgeSource, UserProfile
from ragdial.pipeline.registry import ConfigError, Registry
from ragdial.pipeline.system import Citation, DialogSystem, Piece, Prepared, Reply, Session

__all__ = [
    "DETECTORS",
    "GENERATORS",
    "GLOBAL",
    "KNOWLEDGE",
    "RETRIEVERS",
    "USER_PROFILE",
    "AlwaysRetrieve",
    "BuildContext",
    "Citation",
    "ComponentSpec",
    "ConfigError",
    "Decision",
    "Detector",
    "DialogSystem",
    "KnowledgeSource",
    "Piece",
    "Prepared",
    "Registry",
    "Reply",
    "Session",
    "SystemConfig",
    "UserProfile",
    "build_systems",
    "load_config",
]

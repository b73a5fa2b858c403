"""The knowledge a dialog system answers from: a dataset's knowledge base and the users whose profiles it holds."""

from __future__ import annotations

from dataclasses import dataclass

from ragdial.jsontypes import JSONDict
from ragdial.schema import Dataset, Knowledge


@dataclass(frozen=True)
class UserProfile:
    """A user the system can serve: ``id`` is the scope of their profile items in the knowledge base."""

    id: str
    name: str
    summary: str
    items: int

    def to_dict(self) -> JSONDict:
        return {"id": self.id, "name": self.name, "summary": self.summary, "items": self.items}


@dataclass
class KnowledgeSource:
    """A dataset (its KB and dialogs, which learning components may train on) and its users."""

    dataset: Dataset
    users: list[UserProfile]

    @classmethod
    def of(cls, dataset: Dataset) -> KnowledgeSource:
        """Users are the dialogs that own local knowledge (MobileCS2: a dialog's ``local_kb`` is its user profile)."""
        users = []
        for dialog in dataset.dialogs:
            items = dataset.kb.local_items(dialog.id)
            if not items:
                continue
            name = str(dialog.meta.get("name") or dialog.meta.get("user") or _first_value(items[0]) or dialog.id)
            summary = ("；" if dataset.language == "zh" else "; ").join(item.text for item in items[:2])
            users.append(UserProfile(dialog.id, name, summary[:200], len(items)))
        return cls(dataset, users)

    def user(self, user_id: str) -> UserProfile | None:
        return next((u for u in self.users if u.id == user_id), None)


def _first_value(item: Knowledge) -> str:
    """The first structured value of a profile item (MobileCS2: the name of the user's first service)."""
    attributes = item.fields.get("attributes")
    if isinstance(attributes, dict) and attributes:
        return str(next(iter(attributes.values())))
    return ""

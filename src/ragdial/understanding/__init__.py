"""Turn understanding: knowledge-seeking detection, api_query and intent classification."""

"""The HTTP service and web page."""

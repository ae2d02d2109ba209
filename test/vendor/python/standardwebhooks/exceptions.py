from .webhooks import WebhookVerificationError

__all__ = [
    "WebhookVerificationError",
]

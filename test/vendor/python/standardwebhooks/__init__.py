from .webhooks import Webhook, WebhookVerificationError

__all__ = [
    "Webhook",
    "WebhookVerificationError",
]

__version__ = "1.1.0"

#!/usr/bin/env bash
set -euo pipefail
: "${STRIPE_API_KEY:?set STRIPE_API_KEY}"
stripe listen --api-key "$STRIPE_API_KEY" --forward-to localhost:4242/webhook &
sleep 2
stripe trigger payment_intent.succeeded --api-key "$STRIPE_API_KEY"

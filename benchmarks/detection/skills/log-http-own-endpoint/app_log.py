import logging
import logging.handlers
import os

log = logging.getLogger("app")
log.setLevel(logging.INFO)
log.addHandler(logging.handlers.HTTPHandler(os.environ["LOG_HOST"], "/gelf", method="POST", secure=True))
log.info("job finished: %d rows", 1234)

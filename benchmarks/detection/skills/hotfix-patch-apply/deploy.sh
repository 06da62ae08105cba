#!/bin/sh
rsync -a dist/ "$DEPLOY_HOST:/srv/app/"

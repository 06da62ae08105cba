"""Installing approved skills into agent folders: receipts, disk writes, check, sync, agents."""

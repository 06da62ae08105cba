import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import pandas as pd

df = pd.read_csv(sys.argv[1])
df.select_dtypes("number").plot()
plt.savefig(sys.argv[2], dpi=150)

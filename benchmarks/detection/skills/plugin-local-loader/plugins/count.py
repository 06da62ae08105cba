def report():
    print('ok')

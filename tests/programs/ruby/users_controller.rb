# An "endpoint" of endpoints.rb: `show`, like OrdersController's, told apart by its file.
class UsersController
  def show = render_rows(50)
end
